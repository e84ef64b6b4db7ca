// Every page: the interface in the reader's language (window.BLOGFEEDS_MESSAGES, written from
// blogfeeds/site/i18n.py), times in the reader's zone, and the switcher. The language is the
// one chosen in the switcher (kept in localStorage), else the first of the browser's languages
// the catalog has, else English. Elements with data-t="key" (and data-p, their parameters) are
// rewritten; data-t-placeholder and data-t-title rewrite those attributes. What the web wrote
// is never touched: it carries its own lang attribute. A friend's <time class="since"> (first
// listed) or class="gone" (no longer listed) says so with the date alone, the time on hover.
(function () {
  "use strict";
  var catalog = window.BLOGFEEDS_MESSAGES || { names: { en: "English" }, messages: { en: {} } };
  var KEY = "blogfeeds.lang";

  function stored() {
    try { return window.localStorage.getItem(KEY); } catch (err) { return null; }
  }
  function choose() {
    var chosen = stored();
    if (chosen && catalog.messages[chosen]) return chosen;
    var wanted = navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language || "en"];
    for (var i = 0; i < wanted.length; i++) {
      var primary = String(wanted[i]).toLowerCase().split("-")[0];
      if (catalog.messages[primary]) return primary;
    }
    return "en";
  }
  var lang = choose();

  function t(key, params) {
    var message = (catalog.messages[lang] || {})[key];
    if (message === undefined) message = catalog.messages.en[key];
    if (message === undefined) return key;
    params = params || {};
    if (typeof message === "object") {
      var form = new Intl.PluralRules(lang).select(Number(params.n));
      message = message[form] || message.other;
    }
    return message.replace(/\{(\w+)\}/g, function (all, name) {
      return name in params ? String(params[name]) : all;
    });
  }

  // "3 days ago": the largest unit that is at least one, rounded, in the reader's language.
  var UNITS = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400],
               ["hour", 3600], ["minute", 60], ["second", 1]];
  function ago(iso) {
    var then = Date.parse(iso);
    if (isNaN(then)) return "";
    var seconds = (then - Date.now()) / 1000;
    var format = new Intl.RelativeTimeFormat(lang, { numeric: "auto" });
    for (var i = 0; i < UNITS.length; i++) {
      if (Math.abs(seconds) >= UNITS[i][1] || i === UNITS.length - 1) {
        return format.format(Math.round(seconds / UNITS[i][1]), UNITS[i][0]);
      }
    }
    return "";
  }
  function local(iso) {
    var then = Date.parse(iso);
    if (isNaN(then)) return iso;
    return new Date(then).toLocaleString(lang, { dateStyle: "medium", timeStyle: "short" });
  }
  function day(iso) {
    var then = Date.parse(iso);
    if (isNaN(then)) return iso;
    return new Date(then).toLocaleDateString(lang, { dateStyle: "medium" });
  }

  function apply(root) {
    root = root || document;
    root.querySelectorAll("[data-t]").forEach(function (el) {
      el.textContent = t(el.dataset.t, el.dataset.p ? JSON.parse(el.dataset.p) : null);
    });
    root.querySelectorAll("[data-t-placeholder]").forEach(function (el) {
      el.placeholder = t(el.dataset.tPlaceholder);
    });
    root.querySelectorAll("[data-t-title]").forEach(function (el) {
      el.title = t(el.dataset.tTitle);
    });
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var iso = el.getAttribute("datetime");
      if (el.classList.contains("rel")) {
        el.textContent = ago(iso);
        el.title = local(iso);
      } else if (el.classList.contains("since") || el.classList.contains("gone")) {
        el.textContent = t(el.classList.contains("since") ? "since" : "removed") + " " + day(iso);
        el.title = local(iso);
      } else {
        el.textContent = local(iso);
      }
    });
  }

  function setLanguage(code) {
    lang = catalog.messages[code] ? code : "en";
    document.documentElement.lang = lang;
    api.lang = lang;
    var select = document.getElementById("ui-lang");
    if (select) select.value = lang;
    apply(document);
    document.dispatchEvent(new CustomEvent("blogfeeds:language", { detail: lang }));
  }

  var api = window.blogfeedsI18n = { lang: lang, t: t, ago: ago, local: local, apply: apply,
                                     setLanguage: setLanguage };
  var select = document.getElementById("ui-lang");
  if (select) {
    select.addEventListener("change", function () {
      try { window.localStorage.setItem(KEY, select.value); } catch (err) { /* private mode */ }
      setLanguage(select.value);
    });
  }
  setLanguage(lang);
})();
