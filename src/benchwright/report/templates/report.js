/* Builds each chart of the report with uPlot from the JSON next to it (charts.spec in Python).
   Ticks, legend, zoom (drag across the plot; double-click resets) and the values under the cursor
   are uPlot's. Every drawn chart records its axis labels in data-ticks-x / data-ticks-y and the
   count of drawn charts goes into body[data-rendered]: the tests read both from the DOM. */
(function () {
  "use strict";
  function fmt(v) {
    if (v === null || v === undefined) { return null; }
    var a = Math.abs(v);
    if (a >= 1e6) { return +(v / 1e6).toPrecision(4) + "M"; }
    if (a >= 1e4) { return +(v / 1e3).toPrecision(4) + "k"; }
    return String(+v.toPrecision(4));
  }
  function labels(splits) { return splits.map(fmt); }
  function drawnLabels(u, i) {
    return (u.axes[i]._values || []).filter(function (t) { return t !== null && t !== ""; });
  }
  function axes(spec) {
    var x = { label: spec.x_label, values: function (u, splits) { return labels(splits); } };
    if (spec.x_ticks) {
      var at = spec.x_ticks.map(function (t) { return t[0]; });
      var text = spec.x_ticks.map(function (t) { return t[1]; });
      x.splits = function () { return at; };
      x.values = function () { return text; };
    }
    var out = [x, { label: spec.y_label, size: 60, values: function (u, splits) { return labels(splits); } }];
    if (spec.y2_label) {
      out.push({ scale: "y2", side: 1, label: spec.y2_label, size: 60, grid: { show: false },
                 values: function (u, splits) { return labels(splits); } });
    }
    return out;
  }
  function series(spec) {
    var out = [{ label: spec.x_label, value: function (u, v) { return fmt(v); } }];
    spec.series.forEach(function (s) {
      out.push({
        label: s.axis === "right" ? s.name + " (right axis)" : s.name, scale: s.axis === "right" ? "y2" : "y", stroke: s.color, width: 1.6,
        dash: s.dashed ? [5, 3] : undefined, spanGaps: true,
        points: { show: s.markers, size: 7, fill: s.color },
        value: function (u, v) { return fmt(v); }
      });
    });
    return out;
  }
  function build(fig, drawn) {
    var spec = JSON.parse(fig.querySelector("script.chart-spec").textContent);
    var plot = fig.querySelector(".plot");
    var scales = { x: { time: false, distr: spec.log_x ? 3 : 1, log: 10 }, y: { range: function (u, lo, hi) { return [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1]; } } };
    if (spec.y2_label) { scales.y2 = { range: function (u, lo, hi) { return [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1]; } }; }
    var opts = {
      width: Math.max(320, Math.min(plot.clientWidth || 1060, 1060)), height: 300,
      scales: scales, axes: axes(spec), series: series(spec), cursor: { drag: { x: true, y: false } },
      hooks: { draw: [function (u) {
        fig.setAttribute("data-ticks-x", JSON.stringify(drawnLabels(u, 0)));
        fig.setAttribute("data-ticks-y", JSON.stringify(drawnLabels(u, 1)));
        if (!fig.hasAttribute("data-drawn")) { fig.setAttribute("data-drawn", "1"); drawn.count += 1; }
        document.body.setAttribute("data-rendered", String(drawn.count));
      }] }
    };
    new uPlot(opts, spec.data, plot);
  }
  window.addEventListener("load", function () {
    var drawn = { count: 0 };
    document.body.setAttribute("data-rendered", "0");
    document.querySelectorAll("figure.chart").forEach(function (fig) {
      try { build(fig, drawn); } catch (e) { fig.setAttribute("data-error", String(e)); }
    });
  });
})();
