// A blog page's "How am I connected to…": the shortest chain of friend links from this blog to
// another, following the friends each blog lists (else the other way round), found in the
// browser by a breadth-first search over data/links.js (the friends of every blog, as indexes
// of data/directory.js's rows). Both scripts load when the reader first uses the box.
(function () {
  "use strict";
  var i18n = window.blogfeedsI18n;
  var $ = function (id) { return document.getElementById(id); };
  var me = document.querySelector("article.blog").dataset.blogId;
  var input = $("connect-q"), out = $("connect-out"), hits = $("connect-hits");
  var state = null, loading = null;

  function load(done) {
    if (state) { done(); return; }
    if (loading) { loading.push(done); return; }
    loading = [done];
    out.replaceChildren(message("path_loading"));
    var pending = 2;
    ["../data/directory.js", "../data/links.js"].forEach(function (src) {
      var script = document.createElement("script");
      script.src = src;
      script.onload = function () { if (--pending === 0) ready(); };
      document.head.appendChild(script);
    });
    function ready() {
      var data = window.BLOGFEEDS_DIRECTORY, col = {};
      data.columns.forEach(function (name, i) { col[name] = i; });
      var index = {};
      data.rows.forEach(function (r, i) { index[r[col.id]] = i; });
      state = { rows: data.rows, col: col, index: index, lists: window.BLOGFEEDS_LINKS.lists };
      out.replaceChildren();
      loading.forEach(function (f) { f(); });
      loading = null;
    }
  }
  function message(key, params) {
    var p = document.createElement("p");
    p.className = "muted";
    p.textContent = i18n.t(key, params);
    return p;
  }
  function name(i) { var r = state.rows[i]; return r[state.col.title] || r[state.col.id]; }
  function find(q) {
    var text = q.trim().toLowerCase().replace(/\/+$/, "");
    if (!text) return -1;
    var col = state.col, rows = state.rows, partial = -1;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var url = r[col.url].toLowerCase().replace(/\/+$/, "");
      if (r[col.id] === text || url === text || (r[col.title] || "").toLowerCase() === text) return i;
      if (partial < 0 && (url.indexOf(text) >= 0 || (r[col.title] || "").toLowerCase().indexOf(text) >= 0)) partial = i;
    }
    return partial;
  }
  // Breadth-first from ``from`` along the lists; the path to ``to`` as indexes, or null.
  function path(from, to) {
    var parent = new Int32Array(state.rows.length).fill(-1);
    parent[from] = from;
    var queue = [from];
    for (var head = 0; head < queue.length; head++) {
      var node = queue[head];
      if (node === to) break;
      var next = state.lists[node];
      for (var k = 0; k < next.length; k++) {
        if (parent[next[k]] < 0) { parent[next[k]] = node; queue.push(next[k]); }
      }
    }
    if (parent[to] < 0) return null;
    var chain = [to];
    while (chain[0] !== from) chain.unshift(parent[chain[0]]);
    return chain;
  }
  function show(chain, key) {
    var col = state.col;
    var list = document.createElement("ol");
    list.className = "path";
    list.id = "path";
    chain.forEach(function (i) {
      var r = state.rows[i];
      var li = document.createElement("li");
      li.dataset.blogId = r[col.id];
      var face = document.createElement("span");
      face.className = "avatar";
      face.textContent = r[col.letter];
      face.style.setProperty("--hue", r[col.hue]);
      face.setAttribute("aria-hidden", "true");
      var a = document.createElement("a");
      a.href = encodeURIComponent(r[col.page]) + ".html";
      a.lang = r[col.language];
      a.textContent = name(i);
      li.append(face, " ", a);
      list.appendChild(li);
    });
    out.replaceChildren(message(key, { n: chain.length - 1 }), list);
  }
  function connect() {
    var from = state.index[me], to = find(input.value);
    if (to < 0) { out.replaceChildren(message("path_unknown", { q: input.value.trim() })); return; }
    if (to === from) { out.replaceChildren(message("path_self")); return; }
    var chain = path(from, to);
    if (chain) { show(chain, "path_found"); return; }
    chain = path(to, from);
    if (chain) { show(chain, "path_back"); return; }
    out.replaceChildren(message("path_none"));
  }
  function suggest() {
    var q = input.value.trim().toLowerCase();
    hits.replaceChildren();
    if (q.length < 2) return;
    var col = state.col;
    for (var i = 0, shown = 0; i < state.rows.length && shown < 20; i++) {
      var r = state.rows[i];
      if ((r[col.title] || "").toLowerCase().indexOf(q) >= 0 || r[col.url].toLowerCase().indexOf(q) >= 0) {
        var o = document.createElement("option");
        o.value = r[col.url];
        o.textContent = name(i);
        hits.appendChild(o);
        shown++;
      }
    }
  }
  input.addEventListener("focus", function () { load(function () {}); });
  input.addEventListener("input", function () { load(suggest); });
  $("connect-form").addEventListener("submit", function () { load(connect); });
  window.blogfeedsConnect = { ready: function () { return !!state; } };
})();
