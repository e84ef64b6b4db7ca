// The river's post search over titles and openings (blogfeeds/site/postsearch.py builds the
// index). A query is cut into tokens as the build cut the posts: words (lower case, NFKC),
// and in CJK script each character alone (one-character query) or each pair of neighbours.
// Every token must match; a word of two or more letters matches the words it begins. A search
// loads data/posts/index.js, the shard of each token and the rows of the hits it shows.
(function () {
  "use strict";
  var i18n = window.blogfeedsI18n;
  var $ = function (id) { return document.getElementById(id); };
  var input = $("post-q"), results = $("post-results"), pages = $("river-pages");
  var list = $("post-hits"), count = $("post-count"), more = $("post-more");
  var PAGE = 20;
  var CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff";
  var WORD = new RegExp("[" + CJK + "]+|(?:(?![" + CJK + "])[\\p{L}\\p{N}])+", "gu");
  var IS_CJK = new RegExp("^[" + CJK + "]");
  var loaded = [], loading = {}, keyIndex = null;
  var matches = [], shown = 0, current = 0, started = 0;

  function store() { return window.BLOGFEEDS_POSTS || {}; }
  function load(name) {
    if (store()[name]) return Promise.resolve(store()[name]);
    if (!loading[name]) {
      loading[name] = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = "data/posts/" + name + ".js";
        script.onload = function () { loaded.push(script.src); resolve(store()[name]); };
        script.onerror = function () { delete loading[name]; reject(new Error(name)); };
        document.head.appendChild(script);
      });
    }
    return loading[name];
  }
  // [{token, prefix}] of the query.
  function terms(q) {
    var out = [];
    (q.normalize("NFKC").toLowerCase().match(WORD) || []).forEach(function (word) {
      var chars = Array.from(word);
      if (IS_CJK.test(word)) {
        if (chars.length === 1) out.push({ token: word, prefix: false });
        for (var i = 0; i + 1 < chars.length; i++) out.push({ token: chars[i] + chars[i + 1], prefix: false });
      } else {
        out.push({ token: word, prefix: chars.length >= 2 });
      }
    });
    return out;
  }
  function shardKey(token) {
    return Array.from(token).slice(0, IS_CJK.test(token) ? 1 : 2).join("");
  }
  function decode(deltas, into) {
    var n = 0;
    for (var i = 0; i < deltas.length; i++) { n += deltas[i]; into.push(n); }
    return into;
  }
  // The entry numbers of one term, ascending.
  function postings(shard, term, total) {
    if (!term.prefix) return shard[term.token] ? decode(shard[term.token], []) : [];
    var lists = Object.keys(shard).filter(function (t) { return t.lastIndexOf(term.token, 0) === 0; });
    if (lists.length <= 1) return lists.length ? decode(shard[lists[0]], []) : [];
    var mark = new Uint8Array(total);
    lists.forEach(function (t) {
      var d = shard[t], n = 0;
      for (var i = 0; i < d.length; i++) { n += d[i]; mark[n] = 1; }
    });
    var out = [];
    for (var k = 0; k < total; k++) if (mark[k]) out.push(k);
    return out;
  }
  function intersect(lists, total) {
    lists.sort(function (a, b) { return a.length - b.length; });
    var out = lists[0];
    for (var i = 1; i < lists.length && out.length; i++) {
      var mark = new Uint8Array(total);
      lists[i].forEach(function (n) { mark[n] = 1; });
      out = out.filter(function (n) { return mark[n]; });
    }
    return out;
  }

  function search(q) {
    var seq = ++current;
    started = performance.now();
    var wanted = terms(q);
    if (!wanted.length) {
      results.hidden = true;
      pages.hidden = false;
      return finish(seq);
    }
    return load("index").then(function (index) {
      if (!keyIndex) {
        keyIndex = {};
        index.keys.forEach(function (k, i) { keyIndex[k] = i; });
      }
      var shards = wanted.map(function (t) { return keyIndex[shardKey(t.token)]; });
      if (shards.some(function (n) { return n === undefined; })) return [];
      return Promise.all(shards.map(function (n) { return load("s" + n); })).then(function (got) {
        return intersect(wanted.map(function (t, i) { return postings(got[i], t, index.entries); }),
                         index.entries);
      });
    }).then(function (hits) {
      if (seq !== current) return null;
      matches = hits;
      shown = 0;
      list.replaceChildren();
      results.hidden = false;
      pages.hidden = true;
      return page(seq);
    });
  }
  function page(seq) {
    var slice = matches.slice(shown, shown + PAGE);
    var chunk = store().index.chunk;
    var chunks = [];
    slice.forEach(function (n) {
      var c = Math.floor(n / chunk);
      if (chunks.indexOf(c) < 0) chunks.push(c);
    });
    return Promise.all(chunks.map(function (c) { return load("d" + c); })).then(function () {
      if (seq !== current) return null;
      var frag = document.createDocumentFragment();
      slice.forEach(function (n) { frag.appendChild(row(store()["d" + Math.floor(n / chunk)][n % chunk])); });
      list.appendChild(frag);
      shown += slice.length;
      count.textContent = i18n.t("post_hits", { n: matches.length });
      more.hidden = shown >= matches.length;
      return finish(seq);
    });
  }
  function finish(seq) {
    if (seq !== current) return null;
    api.lastMs = performance.now() - started;
    document.dispatchEvent(new CustomEvent("blogfeeds:posts", { detail: matches.length }));
    return null;
  }
  function el(tag, cls, text, lang) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text) node.textContent = text;
    if (lang) node.lang = lang;
    return node;
  }
  // [guid, date, title, link, opening, page, blog title, lang, letter, hue]
  function row(r) {
    var li = el("li");
    li.dataset.guid = r[0];
    var face = el("span", "avatar", r[8]);
    face.style.setProperty("--hue", r[9]);
    face.setAttribute("aria-hidden", "true");
    var post = el("div", "post");
    var source = el("span", "source");
    if (r[5]) {
      var blog = el("a", "", r[6], r[7]);
      blog.href = "blogs/" + encodeURIComponent(r[5]) + ".html";
      source.appendChild(blog);
    } else {
      source.appendChild(document.createTextNode(r[6]));
    }
    if (r[1]) {
      var when = el("time", "rel", i18n.ago(r[1]));
      when.setAttribute("datetime", r[1]);
      when.title = i18n.local(r[1]);
      source.append(" · ", when);
    }
    var title = el(r[3] ? "a" : "span", "title", r[2] || i18n.t("untitled"), r[7]);
    if (r[3]) { title.href = r[3]; title.rel = "nofollow noopener"; }
    post.append(source, title);
    if (r[4]) post.appendChild(el("p", "summary opening", r[4], r[7]));
    li.append(face, post);
    return li;
  }

  input.addEventListener("input", function () { search(input.value); });
  document.addEventListener("blogfeeds:language", function () {
    if (!results.hidden) count.textContent = i18n.t("post_hits", { n: matches.length });
  });
  more.addEventListener("click", function () { page(current); });
  var api = window.blogfeedsPosts = {
    lastMs: 0, loaded: loaded, search: search,
    tokens: function (q) { return terms(q).map(function (t) { return t.token; }); },
    matches: function () { return matches.length; }
  };
})();
