// The graph page: the friend graph of window.BLOGFEEDS_GRAPH (data/graph.js) drawn by sigma.js
// (WebGL) from a graphology graph; positions start from the build's spiral and are refined by
// ForceAtlas2 in a Web Worker, or a few iterations per animation frame where no worker starts,
// so the page never freezes. Click a node to open the blog's page; search to find one.
(function () {
  "use strict";
  var data = window.BLOGFEEDS_GRAPH;
  var graph = new window.graphology.Graph({ type: "directed", multi: false, allowSelfLoops: false });
  // Size by in-degree relative to the most linked blog: only hubs are big, so only their labels
  // show until one zooms in (placing labels is the costly part of drawing 10,000 blogs).
  var maxIn = data.nodes.reduce(function (m, n) { return Math.max(m, n[3]); }, 1);
  data.nodes.forEach(function (n) {
    graph.addNode(n[0], {
      label: n[1], page: n[2], inDegree: n[3], color: n[4], x: n[5], y: n[6],
      size: 2 + 14 * Math.sqrt(n[3] / maxIn)
    });
  });
  var ids = data.nodes.map(function (n) { return n[0]; });
  data.edges.forEach(function (e) { graph.addEdge(ids[e[0]], ids[e[1]]); });
  // A blog without a friend link among those drawn has nothing to place it by: it stands,
  // labelled, in a row below the others (sigma's y grows upwards), and the layout leaves it out.
  var orphans = graph.filterNodes(function (node) { return graph.degree(node) === 0; });
  var orphanSet = new Set(orphans);
  orphans.forEach(function (node) { graph.setNodeAttribute(node, "forceLabel", true); });
  function placeOrphans() {
    if (!orphans.length || orphans.length === graph.order) return;
    var minX = Infinity, maxX = -Infinity, minY = Infinity;
    graph.forEachNode(function (node, a) {
      if (orphanSet.has(node)) return;
      minX = Math.min(minX, a.x); maxX = Math.max(maxX, a.x); minY = Math.min(minY, a.y);
    });
    var width = Math.max(maxX - minX, 1), perRow = Math.max(Math.ceil(Math.sqrt(orphans.length)), 4);
    var step = width / perRow;
    orphans.forEach(function (node, i) {
      graph.mergeNodeAttributes(node, {
        x: minX + step * (i % perRow), y: minY - step * (1 + Math.floor(i / perRow)) });
    });
  }
  placeOrphans();

  var big = graph.order > 2000;
  var running = false;
  var focus = null;
  var focusNeighbours = null;
  // Edges dark enough to see on the light background at any zoom: however far one zooms out
  // they stay sigma's minimum of 1.7 px wide, and a lighter grey faded into the background.
  var renderer = new window.Sigma(graph, document.getElementById("graph"), {
    defaultEdgeColor: big ? "#b4bcc6" : "#9ea7b3",
    defaultEdgeType: big ? "line" : "arrow",
    labelRenderedSizeThreshold: big ? 10 : 4,
    labelDensity: big ? 0.3 : 1,
    hideEdgesOnMove: big,
    hideLabelsOnMove: big,
    zIndex: true,
    nodeReducer: function (node, attrs) {
      if (!focus) return attrs;
      if (node === focus) return Object.assign({}, attrs, { highlighted: true, forceLabel: true, zIndex: 2 });
      if (focusNeighbours.has(node)) return Object.assign({}, attrs, { forceLabel: !big, zIndex: 1 });
      return Object.assign({}, attrs, { color: "#e6e8eb", label: "", zIndex: 0 });
    },
    edgeReducer: function (edge, attrs) {
      // Drawing tens of thousands of edges on every layout step is what costs a frame; a big
      // graph shows its edges once the layout stops (or around the focused blog).
      if (!focus) return big && running ? Object.assign({}, attrs, { hidden: true }) : attrs;
      var ext = graph.extremities(edge);
      if (ext[0] === focus || ext[1] === focus) return Object.assign({}, attrs, { color: "#6e7781", size: 1.5 });
      return Object.assign({}, attrs, { hidden: true });
    }
  });

  function setFocus(node) {
    focus = node;
    focusNeighbours = node ? new Set(graph.neighbors(node)) : null;
    renderer.refresh();
  }
  renderer.on("clickNode", function (ev) {
    var page = graph.getNodeAttribute(ev.node, "page");
    window.location.href = "blogs/" + encodeURIComponent(page) + ".html";
  });
  renderer.on("enterNode", function (ev) { if (!searched) setFocus(ev.node); });
  renderer.on("leaveNode", function () { if (!searched) setFocus(null); });

  // Search: suggestions while typing, the first match focused and centred.
  var searched = false;
  var input = document.getElementById("graph-q");
  var hits = document.getElementById("graph-hits");
  var lower = data.nodes.map(function (n) { return (n[1] + "\n" + n[0]).toLowerCase(); });
  function find(q) {
    var out = [];
    for (var i = 0; i < lower.length && out.length < 20; i++) if (lower[i].indexOf(q) >= 0) out.push(i);
    return out;
  }
  input.addEventListener("input", function () {
    var q = input.value.trim().toLowerCase();
    hits.replaceChildren();
    if (!q) { searched = false; setFocus(null); return; }
    var found = find(q);
    found.forEach(function (i) {
      var o = document.createElement("option");
      o.value = data.nodes[i][1];
      o.textContent = data.nodes[i][0];
      hits.appendChild(o);
    });
    if (!found.length) return;
    var exact = found.filter(function (i) { return data.nodes[i][1].toLowerCase() === q || data.nodes[i][0] === q; });
    var node = ids[(exact.length ? exact : found)[0]];
    searched = true;
    setFocus(node);
    var pos = renderer.getNodeDisplayData(node);
    if (pos) renderer.getCamera().animate({ x: pos.x, y: pos.y, ratio: big ? 0.15 : 0.6 }, { duration: 400 });
  });

  // Layout: ForceAtlas2, stopped after a while or by the button.
  var status = document.getElementById("graph-status");
  var button = document.getElementById("layout-toggle");
  var api = { graph: graph, renderer: renderer, layout: "none", layoutDone: false, orphans: orphans,
              focus: function () { return focus; }, readyMs: performance.now() };
  window.blogfeedsGraph = api;
  var settings = window.forceAtlas2.inferSettings(graph);
  settings.barnesHutOptimize = graph.order > 500;
  var seconds = graph.order > 5000 ? 20 : graph.order > 500 ? 8 : 3;
  // The worker lays out a copy: the drawn graph takes its positions a few times a second, not
  // on every iteration (each update redraws every node), so the page stays responsive.
  var shadow = graph.copy();
  orphans.forEach(function (node) { shadow.dropNode(node); });
  var worker = null, timer = null, sync = null;
  function syncPositions() {
    graph.updateEachNodeAttributes(function (node, attrs) {
      if (!shadow.hasNode(node)) return attrs;
      attrs.x = shadow.getNodeAttribute(node, "x");
      attrs.y = shadow.getNodeAttribute(node, "y");
      return attrs;
    }, { attributes: ["x", "y"] });
    placeOrphans();
  }
  function stop() {
    running = false;
    if (worker) worker.stop();
    clearTimeout(timer);
    clearInterval(sync);
    syncPositions();
    button.dataset.t = "run_layout";
    button.textContent = window.blogfeedsI18n.t("run_layout");
    api.layoutDone = true;
    if (big) renderer.setSetting("renderLabels", true);
    renderer.refresh();
  }
  function start() {
    running = true;
    api.layoutDone = false;
    // Placing labels is most of a frame at 10,000 blogs: a big graph moves without them.
    if (big) renderer.setSetting("renderLabels", false);
    button.dataset.t = "stop_layout";
    button.textContent = window.blogfeedsI18n.t("stop_layout");
    timer = setTimeout(stop, seconds * 1000);
    sync = setInterval(syncPositions, big ? 1000 : 100);
    if (worker) { worker.start(); return; }
    var frame = function () {
      if (!running) return;
      var t0 = performance.now();
      do { window.forceAtlas2.assign(shadow, { iterations: 1, settings: settings }); }
      while (performance.now() - t0 < 12 && graph.order < 2000);
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }
  if (graph.order > 1 && graph.size > 0) {
    try {
      worker = new window.FA2Layout(shadow, { settings: settings });
      api.layout = "worker";
    } catch (err) {
      worker = null;
      api.layout = "frames";
    }
    button.addEventListener("click", function () { if (running) stop(); else start(); });
    start();
  } else {
    button.hidden = true;
    api.layoutDone = true;
  }
  var how = document.createElement("span");
  how.dataset.t = api.layout === "none" ? "layout_built" : "layout_fa2";
  how.textContent = window.blogfeedsI18n.t(how.dataset.t);
  status.append(" · ", how);
})();
