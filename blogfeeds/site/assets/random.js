// "Random blog" and "Random post" on every page: drawn in the browser, active blogs more often
// (the weights: blogfeeds/site/randomlinks.py). data/random.js (each shard's total weight) and
// one data/random-<n>.js (its blogs) load only when a link is used; a draw is exact: one
// uniform number picks the shard by its total, then the blog by the weights inside it.
(function () {
  "use strict";
  var links = document.querySelectorAll("a[data-random]");
  if (!links.length) return;
  var root = links[0].dataset.root || "";
  var loading = {};
  function store() { return window.BLOGFEEDS_RANDOM || {}; }
  function load(name, src) {
    if (store()[name]) return Promise.resolve(store()[name]);
    if (!loading[name]) {
      loading[name] = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = root + src;
        script.onload = function () { resolve(store()[name]); };
        script.onerror = function () { delete loading[name]; reject(new Error(src)); };
        document.head.appendChild(script);
      });
    }
    return loading[name];
  }
  // The item whose share of the cumulative weight holds x (0 <= x < the sum), and x within it.
  function within(items, weight, x) {
    var last = -1;
    for (var i = 0; i < items.length; i++) {
      var w = weight(items[i]);
      if (!w) continue;
      last = i;
      if (x < w) return [i, x];
      x -= w;
    }
    return [last, 0];  // rounding at the very end
  }
  // kind: "blog" or "post"; u and v in [0, 1) (Math.random() unless given): the page's URL.
  function pick(kind, u, v) {
    if (u === undefined) u = Math.random();
    if (v === undefined) v = Math.random();
    var post = kind === "post";
    return load("index", "data/random.js").then(function (index) {
      var col = post ? 1 : 0, sum = 0;
      index.shards.forEach(function (t) { sum += t[col]; });
      if (!sum) return null;
      var at = within(index.shards, function (t) { return t[col]; }, u * sum);
      return load("s" + at[0], "data/random-" + at[0] + ".js").then(function (rows) {
        var row = rows[within(rows, function (r) { return post && !r[2] ? 0 : r[1]; }, at[1])[0]];
        var url = root + "blogs/" + encodeURIComponent(row[0]) + ".html";
        return post ? url + "#post-" + Math.min(Math.floor(v * row[2]), row[2] - 1) : url;
      });
    });
  }
  links.forEach(function (a) {
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      pick(a.dataset.random).then(function (url) { location.href = url || a.href; },
                                  function () { location.href = a.href; });
    });
  });
  window.blogfeedsRandom = { pick: pick };
})();
