import Graph from "graphology";
import forceAtlas2 from "graphology-layout-forceatlas2";
import FA2Layout from "graphology-layout-forceatlas2/worker";
import Sigma from "sigma";
window.graphology = { Graph: Graph };
window.forceAtlas2 = forceAtlas2;
window.FA2Layout = FA2Layout;
window.Sigma = Sigma;
