// The directory page: filters, search, sorting and paging over window.BLOGFEEDS_DIRECTORY
// (data/directory.js, columnar rows). Rows are built with textContent: titles are the web's.
(function () {
  "use strict";
  var data = window.BLOGFEEDS_DIRECTORY;
  var PAGE = 50;
  var col = {};
  data.columns.forEach(function (name, i) { col[name] = i; });
  var rows = data.rows;
  var n = rows.length;
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
             feed: $("has-feed"), minIn: $("min-in"), sort: $("sort") };
  function facet(select, column) {
    var counts = {};
    for (var i = 0; i < n; i++) { var v = rows[i][col[column]]; counts[v] = (counts[v] || 0) + 1; }
    Object.keys(counts).sort(function (a, b) { return counts[b] - counts[a] || (a < b ? -1 : 1); })
      .forEach(function (v) {
        var o = document.createElement("option");
        o.value = v; o.textContent = (v || "(unknown)") + " (" + counts[v] + ")";
        select.appendChild(o);
      });
  }
  facet(ui.lang, "lang"); facet(ui.platform, "platform"); facet(ui.status, "status");

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

  function apply() {
    var t0 = performance.now();
    var q = ui.q.value.trim().toLowerCase();
    var terms = q ? q.split(/\s+/) : [];
    var lang = ui.lang.value, platform = ui.platform.value, status = ui.status.value;
    var needFeed = ui.feed.checked, minIn = parseInt(ui.minIn.value, 10) || 0;
    var filterLang = ui.lang.selectedIndex > 0, filterPlatform = ui.platform.selectedIndex > 0;
    var filterStatus = ui.status.selectedIndex > 0;
    var out = [];
    outer: for (var i = 0; i < n; i++) {
      var r = rows[i];
      if (filterLang && r[col.lang] !== lang) continue;
      if (filterPlatform && r[col.platform] !== platform) continue;
      if (filterStatus && r[col.status] !== status) continue;
      if (needFeed && !r[col.feed]) continue;
      if (r[col["in"]] < minIn) continue;
      for (var k = 0; k < terms.length; k++) if (hay[i].indexOf(terms[k]) < 0) continue outer;
      out.push(i);
    }
    out.sort(sorters[ui.sort.value] || sorters["in"]);
    matches = out;
    page = 0;
    render();
    window.blogfeedsDirectory.lastMs = performance.now() - t0;
  }

  function cell(tr, text, cls) {
    var td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  function render() {
    var body = $("rows");
    var frag = document.createDocumentFragment();
    var pages = Math.max(Math.ceil(matches.length / PAGE), 1);
    if (page >= pages) page = pages - 1;
    var slice = matches.slice(page * PAGE, page * PAGE + PAGE);
    slice.forEach(function (i) {
      var r = rows[i];
      var tr = document.createElement("tr");
      tr.dataset.blogId = r[col.id];
      var td = cell(tr, "", "blog");
      var a = document.createElement("a");
      a.className = "title";
      a.href = "blogs/" + encodeURIComponent(r[col.page]) + ".html";
      a.textContent = r[col.title] || r[col.id];
      td.appendChild(a);
      var sub = document.createElement("span");
      sub.className = "sub";
      sub.textContent = r[col.url] + ("description" in col && r[col.description] ? " · " + r[col.description] : "");
      td.appendChild(sub);
      cell(tr, r[col.language] || "");
      cell(tr, r[col.platform]);
      var noFeed = !r[col.feed] && r[col.status] !== "no_feed";
      cell(tr, r[col.status] + (noFeed ? " · no feed" : ""), "status status-" + r[col.status]);
      cell(tr, String(r[col["in"]]), "num");
      cell(tr, (r[col.last] || "").slice(0, 10));
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    $("count").textContent = matches.length === n
      ? n + " blogs"
      : matches.length + " of " + n + " blogs";
    $("page-of").textContent = "Page " + (page + 1) + " of " + pages;
    $("prev").disabled = page === 0;
    $("next").disabled = page >= pages - 1;
  }

  ui.q.addEventListener("input", apply);
  [ui.lang, ui.platform, ui.status, ui.feed, ui.minIn, ui.sort].forEach(function (el) {
    el.addEventListener("change", apply);
  });
  ui.minIn.addEventListener("input", apply);
  $("prev").addEventListener("click", function () { page--; render(); window.scrollTo(0, 0); });
  $("next").addEventListener("click", function () { page++; render(); window.scrollTo(0, 0); });
  window.blogfeedsDirectory = {
    total: n, lastMs: 0,
    setPageSize: function (size) { PAGE = size; page = 0; render(); },
    matches: function () { return matches.map(function (i) { return rows[i][col.id]; }); }
  };
  apply();
  window.blogfeedsDirectory.readyMs = performance.now();
})();
