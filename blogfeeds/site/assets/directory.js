// The directory page: filters, topics to browse, search, sorting and paging over
// window.BLOGFEEDS_DIRECTORY (data/directory.js, columnar rows). Rows are built with
// textContent: titles are the web's, and each carries its blog's lang. The filters live in the
// address's #fragment (#topic=travel&activity=active), so a category is a link.
(function () {
  "use strict";
  var data = window.BLOGFEEDS_DIRECTORY;
  var i18n = window.blogfeedsI18n;
  var PAGE = 50;
  var col = {};
  data.columns.forEach(function (name, i) { col[name] = i; });
  var rows = data.rows;
  var n = rows.length;
  var topicKeys = data.topics;
  // One lower-cased haystack per blog, built once: a search is then one pass of indexOf.
  var hay = new Array(n);
  var extraText = ["description", "author"].filter(function (c) { return c in col; });
  for (var i = 0; i < n; i++) {
    var r = rows[i];
    var parts = [r[col.title], r[col.id], r[col.url]];
    extraText.forEach(function (c) { if (r[col[c]]) parts.push(r[col[c]]); });
    hay[i] = parts.join("\n").toLowerCase();
  }
  var $ = function (id) { return document.getElementById(id); };
  var ui = { q: $("q"), lang: $("lang"), platform: $("platform"), status: $("status"),
             activity: $("activity"), topic: $("topic"), health: $("health"), feed: $("has-feed"), minIn: $("min-in"),
             sort: $("sort") };
  var hasActivity = "activity" in col;
  function activityOf(r) { return hasActivity ? r[col.activity] || "" : ""; }
  function activityLabel(v) { return i18n.t("act_" + v); }
  function topicLabel(k) { return i18n.t("topic_" + topicKeys[k]); }
  // A blog never checked has health ""; the filter names it (an option's "" is "any").
  function healthOf(r) { return r[col.health] || "unchecked"; }
  function healthLabel(v) {
    var label = i18n.t("hk_" + v);
    return label === "hk_" + v ? v : label;
  }

  // Counts per value of each facet, once; the labels follow the interface language.
  function counting(value) {
    var counts = {};
    for (var i = 0; i < n; i++) {
      [].concat(value(rows[i])).forEach(function (v) { counts[v] = (counts[v] || 0) + 1; });
    }
    return counts;
  }
  var facets = {
    lang: { counts: counting(function (r) { return r[col.lang]; }), label: function (v) { return v || i18n.t("unknown"); } },
    platform: { counts: counting(function (r) { return r[col.platform]; }), label: function (v) { return v || i18n.t("unknown"); } },
    status: { counts: counting(function (r) { return r[col.status]; }), label: function (v) { return v || i18n.t("unknown"); } },
    activity: { counts: counting(activityOf), label: activityLabel },
    health: { counts: counting(healthOf), label: healthLabel },
    topic: { counts: counting(function (r) { return r[col.topics].map(function (k) { return topicKeys[k]; }); }),
             label: function (v) { return i18n.t("topic_" + v); } }
  };
  function ordered(name) {
    var counts = facets[name].counts;
    return Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a] || (a < b ? -1 : 1); });
  }
  function fillFacets() {
    Object.keys(facets).forEach(function (name) {
      var select = ui[name], keep = select.value;
      while (select.options.length > 1) select.remove(1);
      ordered(name).forEach(function (v) {
        var o = document.createElement("option");
        o.value = v;
        o.textContent = facets[name].label(v) + " (" + facets[name].counts[v] + ")";
        select.appendChild(o);
      });
      select.value = keep;
    });
  }
  // The categories a reader browses: activity and topics, as links that set the filters.
  function fillBrowse() {
    var nav = $("browse");
    var frag = document.createDocumentFragment();
    [["activity", "browse_activity"], ["topic", "browse_topics"]].forEach(function (pair) {
      var name = pair[0], values = ordered(name).filter(function (v) { return v; });
      if (!values.length) return;
      var group = document.createElement("p");
      var head = document.createElement("b");
      head.textContent = i18n.t(pair[1]) + ": ";
      group.appendChild(head);
      ["", ...values].forEach(function (v) {
        var a = document.createElement("a");
        a.href = "#" + (v ? name + "=" + encodeURIComponent(v) : "");
        a.className = "chip" + (ui[name].value === v ? " on" : "");
        a.dataset.facet = name;
        a.dataset.value = v;
        a.textContent = v ? facets[name].label(v) + " " + facets[name].counts[v] : i18n.t("all");
        a.addEventListener("click", function (ev) {
          ev.preventDefault();
          ui[name].value = v;
          apply();
        });
        group.appendChild(a);
      });
      frag.appendChild(group);
    });
    nav.replaceChildren(frag);
  }

  var matches = [];
  var page = 0;
  var sorters = {
    "in": function (a, b) { return rows[b][col["in"]] - rows[a][col["in"]] || cmp(a, b); },
    "last": function (a, b) {
      var x = rows[a][col.last], y = rows[b][col.last];
      return x === y ? cmp(a, b) : (x < y ? 1 : -1);
    },
    "title": function (a, b) {
      var x = (rows[a][col.title] || rows[a][col.id]).toLowerCase();
      var y = (rows[b][col.title] || rows[b][col.id]).toLowerCase();
      return x === y ? cmp(a, b) : (x < y ? -1 : 1);
    }
  };
  function cmp(a, b) { return rows[a][col.id] < rows[b][col.id] ? -1 : 1; }

  var FRAGMENT = ["topic", "activity", "lang", "platform", "status", "health"];
  function readFragment() {
    var params = new URLSearchParams(location.hash.slice(1));
    FRAGMENT.forEach(function (name) { ui[name].value = params.get(name) || ""; });
  }
  function writeFragment() {
    var params = new URLSearchParams();
    FRAGMENT.forEach(function (name) { if (ui[name].value) params.set(name, ui[name].value); });
    var hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  function apply() {
    var t0 = performance.now();
    var q = ui.q.value.trim().toLowerCase();
    var terms = q ? q.split(/\s+/) : [];
    var lang = ui.lang.value, platform = ui.platform.value, status = ui.status.value;
    var activity = ui.activity.value, topic = topicKeys.indexOf(ui.topic.value);
    var health = ui.health.value, filterHealth = health !== "";
    var needFeed = ui.feed.checked, minIn = parseInt(ui.minIn.value, 10) || 0;
    var filterLang = ui.lang.selectedIndex > 0, filterPlatform = ui.platform.selectedIndex > 0;
    var filterStatus = ui.status.selectedIndex > 0, filterActivity = ui.activity.selectedIndex > 0;
    var out = [];
    outer: for (var i = 0; i < n; i++) {
      var r = rows[i];
      if (filterLang && r[col.lang] !== lang) continue;
      if (filterPlatform && r[col.platform] !== platform) continue;
      if (filterStatus && r[col.status] !== status) continue;
      if (filterActivity && activityOf(r) !== activity) continue;
      if (filterHealth && healthOf(r) !== health) continue;
      if (topic >= 0 && r[col.topics].indexOf(topic) < 0) continue;
      if (needFeed && !r[col.feed]) continue;
      if (r[col["in"]] < minIn) continue;
      for (var k = 0; k < terms.length; k++) if (hay[i].indexOf(terms[k]) < 0) continue outer;
      out.push(i);
    }
    out.sort(sorters[ui.sort.value] || sorters["in"]);
    matches = out;
    page = 0;
    writeFragment();
    fillBrowse();
    render();
    window.blogfeedsDirectory.lastMs = performance.now() - t0;
  }

  function el(tag, cls, text, lang) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text) node.textContent = text;
    if (lang !== undefined) node.lang = lang;
    return node;
  }
  function copy(text, button) {
    function done() {
      button.textContent = i18n.t("copied");
      setTimeout(function () { button.textContent = i18n.t("copy"); }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallback(); });
    } else {
      fallback();
    }
    function fallback() {
      var area = el("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.style.position = "fixed";
      area.style.opacity = "0";
      document.body.appendChild(area);
      area.select();
      try { document.execCommand("copy"); } catch (err) { /* the address stays selectable */ }
      area.remove();
      done();
    }
  }
  function render() {
    var body = $("rows");
    var frag = document.createDocumentFragment();
    var pages = Math.max(Math.ceil(matches.length / PAGE), 1);
    if (page >= pages) page = pages - 1;
    var slice = matches.slice(page * PAGE, page * PAGE + PAGE);
    slice.forEach(function (i) {
      var r = rows[i];
      var lang = r[col.language];
      var tr = el("tr");
      tr.dataset.blogId = r[col.id];
      var cellBlog = el("td", "blog");
      var face = el("span", "avatar", r[col.letter]);
      face.style.setProperty("--hue", r[col.hue]);
      face.setAttribute("aria-hidden", "true");
      var td = el("div", "who");
      var line = el("div", "line");
      line.append(face, td);
      cellBlog.appendChild(line);
      var a = el("a", "title", r[col.title] || r[col.id], lang);
      a.href = "blogs/" + encodeURIComponent(r[col.page]) + ".html";
      td.appendChild(a);
      var sub = el("span", "sub", r[col.url]);
      td.appendChild(sub);
      if ("description" in col && r[col.description]) td.appendChild(el("span", "description", r[col.description], lang));
      if (r[col.topics].length) {
        var tags = el("span", "topics");
        r[col.topics].forEach(function (k) {
          var chip = el("a", "chip", topicLabel(k));
          chip.href = "#topic=" + topicKeys[k];
          chip.addEventListener("click", function (ev) { ev.preventDefault(); ui.topic.value = topicKeys[k]; apply(); });
          tags.appendChild(chip);
        });
        td.appendChild(tags);
      }
      tr.appendChild(cellBlog);
      var latest = el("td", "latest");
      if (r[col.last]) {
        if (r[col.post]) latest.appendChild(el("span", "post", r[col.post], lang));
        var when = el("time", "rel", i18n.ago(r[col.last]));
        when.setAttribute("datetime", r[col.last]);
        when.title = i18n.local(r[col.last]);
        latest.appendChild(when);
      } else {
        latest.appendChild(el("span", "muted", i18n.t("no_post")));
      }
      tr.appendChild(latest);
      var facts = [r[col.platform], r[col.language]];
      if (hasActivity && r[col.activity]) facts.push(activityLabel(r[col.activity]));
      if (r[col.status] !== "ok") facts.push(r[col.status]);
      if (r[col.health] && r[col.health] !== "ok") facts.push(healthLabel(r[col.health]));
      tr.appendChild(el("td", "platform", facts.filter(Boolean).join(" · ")));
      tr.appendChild(el("td", "num", String(r[col["in"]])));
      var feed = el("td", "feed");
      if (r[col.feed]) {
        var link = el("a", "feed-url", i18n.t("feed"));
        link.href = r[col.feed];
        link.title = r[col.feed];
        link.rel = "nofollow noopener";
        var button = el("button", "copy", i18n.t("copy"));
        button.type = "button";
        button.title = i18n.t("copy_feed");
        button.dataset.feed = r[col.feed];
        button.addEventListener("click", function () { copy(r[col.feed], button); });
        feed.append(link, " ", button);
      } else {
        feed.appendChild(el("span", "muted", i18n.t("no_feed")));
      }
      tr.appendChild(feed);
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    $("count").textContent = matches.length === n
      ? i18n.t("n_blogs", { n: n })
      : i18n.t("k_of_n_blogs", { k: matches.length, n: n });
    $("page-of").textContent = i18n.t("page_of", { p: page + 1, n: pages });
    $("prev").disabled = page === 0;
    $("next").disabled = page >= pages - 1;
  }

  ui.q.addEventListener("input", apply);
  [ui.lang, ui.platform, ui.status, ui.activity, ui.health, ui.topic, ui.feed, ui.minIn, ui.sort].forEach(function (node) {
    node.addEventListener("change", apply);
  });
  ui.minIn.addEventListener("input", apply);
  $("prev").addEventListener("click", function () { page--; render(); window.scrollTo(0, 0); });
  $("next").addEventListener("click", function () { page++; render(); window.scrollTo(0, 0); });
  window.addEventListener("hashchange", function () { readFragment(); apply(); });
  document.addEventListener("blogfeeds:language", function () { fillFacets(); fillBrowse(); render(); });
  window.blogfeedsDirectory = {
    total: n, lastMs: 0,
    setPageSize: function (size) { PAGE = size; page = 0; render(); },
    matches: function () { return matches.map(function (i) { return rows[i][col.id]; }); }
  };
  fillFacets();
  readFragment();
  apply();
  window.blogfeedsDirectory.readyMs = performance.now();
})();
