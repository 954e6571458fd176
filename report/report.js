// servesim report: draws the charts from the JSON in #report-data (report/report_data.h says
// its shape; docs/report.md what each chart shows). Every chart is counted into #report-status:
// data-charts (made), data-drawn (drawn with visible series ink), data-errors, data-done.
(function () {
  'use strict';

  var statusEl = document.getElementById('report-status');
  var root = document.getElementById('report');
  var made = 0;
  var drawn = 0;
  var done = false;
  var palette = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
                 '#17becf', '#bcbd22', '#7f7f7f'];

  function updateStatus() {
    var errors = window.reportErrors || [];
    statusEl.setAttribute('data-errors', String(errors.length));
    statusEl.setAttribute('data-charts', String(made));
    statusEl.setAttribute('data-drawn', String(drawn));
    statusEl.setAttribute('data-done', String(done));
    var list = document.getElementById('report-error-list');
    if (list) list.textContent = errors.length ? ' Errors: ' + errors.join('; ') : '';
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function color(i) { return palette[i % palette.length]; }

  // True when the plot area holds pixels of a series colour (saturated), not only the grey
  // axes and grid: the chart really drew data.
  function hasSeriesInk(u) {
    var b = u.bbox;
    if (b.width <= 0 || b.height <= 0) return false;
    var px = u.ctx.getImageData(b.left, b.top, b.width, b.height).data;
    for (var i = 0; i < px.length; i += 4) {
      if (px[i + 3] < 128) continue;
      var hi = Math.max(px[i], px[i + 1], px[i + 2]);
      var lo = Math.min(px[i], px[i + 1], px[i + 2]);
      if (hi - lo > 60) return true;
    }
    return false;
  }

  // Makes a uPlot chart in `parent`; `extraDraw(u)` draws marks (SLO lines, ridge) on top.
  function chart(parent, title, caption, opts, data, extraDraw) {
    var box = el('div', {class: 'chart'});
    parent.appendChild(box);
    var counted = false;
    opts.title = title;
    opts.width = opts.width || 640;
    opts.height = opts.height || 300;
    opts.legend = opts.legend || {live: false};
    opts.hooks = opts.hooks || {};
    opts.hooks.draw = [function (u) {
      if (extraDraw) extraDraw(u);
      if (!counted && hasSeriesInk(u)) {
        counted = true;
        drawn++;
        updateStatus();
      }
    }];
    made++;
    var u = new uPlot(opts, data, box);
    if (caption) box.appendChild(el('div', {class: 'caption'}, caption));
    updateStatus();
    return u;
  }

  function lineSeries(label, i, dash) {
    var s = {label: label, stroke: color(i), width: 1.5, spanGaps: true, points: {show: false}};
    if (dash) s.dash = [6, 4];
    return s;
  }

  function pointSeries(label, stroke, size) {
    return {label: label, stroke: stroke, fill: stroke, width: 0, spanGaps: false,
            paths: function () { return null; }, points: {show: true, size: size || 6, fill: stroke}};
  }

  // A vertical line at x = v (data units), labelled.
  function vline(u, v, stroke, label) {
    if (v === null || v === undefined) return;
    var x = Math.round(u.valToPos(v, 'x', true));
    var b = u.bbox;
    if (x < b.left || x > b.left + b.width) return;
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = stroke;
    ctx.setLineDash([5, 4]);
    ctx.lineWidth = 1.5 * devicePixelRatio;
    ctx.beginPath();
    ctx.moveTo(x, b.top);
    ctx.lineTo(x, b.top + b.height);
    ctx.stroke();
    ctx.fillStyle = stroke;
    ctx.font = (11 * devicePixelRatio) + 'px sans-serif';
    ctx.fillText(label, x + 4 * devicePixelRatio, b.top + 12 * devicePixelRatio);
    ctx.restore();
  }

  // ---- numbers ----
  function fmt(v, digits) {
    if (v === null || v === undefined || (typeof v === 'number' && !isFinite(v))) return '-';
    if (typeof v !== 'number') return String(v);
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e7 || a < 1e-3)) return v.toExponential(2);
    return v.toLocaleString('en-US', {maximumFractionDigits: digits === undefined ? 3 : digits});
  }
  function get(o, path) {
    var parts = path.split('.');
    for (var i = 0; i < parts.length; i++) {
      if (o === null || o === undefined) return null;
      o = o[parts[i]];
    }
    return o === undefined ? null : o;
  }
  function ms(path) { return function (s) { var v = get(s, path); return v === null ? null : v * 1e3; }; }
  function pct(path) { return function (s) { var v = get(s, path); return v === null ? null : v * 100; }; }
  function key(path) { return function (s) { return get(s, path); }; }

  // ---- summary table ----
  var summaryRows = [
    ['requests'],
    ['scheduler', key('scheduler')],
    ['finished', key('finished'), 0],
    ['rejected', key('rejected'), 0],
    ['unfinished (partial run)', key('unfinished'), 0],
    ['preemptions', key('preemptions'), 0],
    ['throughput'],
    ['output tokens/s', key('output_tokens_per_s'), 1],
    ['requests/s', key('requests_per_s'), 3],
    ['duration (s)', key('duration_s'), 3],
    ['latency (ms)'],
    ['TTFT p50', ms('ttft_s.p50'), 2], ['TTFT p99', ms('ttft_s.p99'), 2],
    ['TPOT p50', ms('tpot_s.p50'), 3], ['TPOT p99', ms('tpot_s.p99'), 3],
    ['E2E p50', ms('e2e_s.p50'), 1], ['E2E p99', ms('e2e_s.p99'), 1],
    ['queue p50', ms('queue_s.p50'), 2], ['queue p99', ms('queue_s.p99'), 2],
    ['engine'],
    ['steps', key('steps'), 0],
    ['sequences/step', key('mean_batch_sequences'), 2],
    ['busy %', pct('busy_share'), 1],
    ['KV peak (tokens)', key('kv_peak_used_tokens'), 0],
    ['KV capacity (tokens)', key('kv_capacity_tokens'), 0],
    ['MBU %', pct('mbu'), 1],
    ['MFU %', pct('mfu'), 1],
    ['SLO'],
    ['attainment %', pct('slo.attainment'), 1],
    ['goodput (req/s)', key('slo.goodput_requests_per_s'), 3]
  ];

  function summaryTable(runs) {
    var t = el('table', {class: 'summary'});
    var group = null;  // a group's header row, added with its first row that has a value
    var head = el('tr');
    head.appendChild(el('th', null, ''));
    runs.forEach(function (r) { head.appendChild(el('th', {title: r.path}, r.name)); });
    t.appendChild(head);
    summaryRows.forEach(function (row) {
      var tr = el('tr');
      if (row.length === 1) {
        tr.className = 'group';
        tr.appendChild(el('td', {colspan: String(runs.length + 1)}, row[0]));
        group = tr;
        return;
      }
      var values = runs.map(function (r) { return row[1](r.summary); });
      if (values.every(function (v) { return v === null; })) return;
      tr.appendChild(el('td', {class: 'label'}, row[0]));
      values.forEach(function (v) { tr.appendChild(el('td', null, fmt(v, row[2]))); });
      if (group) t.appendChild(group);
      group = null;
      t.appendChild(tr);
    });
    return t;
  }

  // ---- latency CDFs ----
  var cdfs = [['ttft_ms', 'TTFT (ms)'], ['tpot_ms', 'TPOT (ms)'], ['e2e_ms', 'E2E latency (ms)'],
              ['queue_ms', 'queue delay (ms)']];

  function cdfCharts(parent, runs) {
    var withCdf = runs.filter(function (r) { return r.cdf; });
    if (!withCdf.length) {
      parent.appendChild(el('p', {class: 'note'}, 'No requests.csv in these runs (written unless --no-requests-csv).'));
      return;
    }
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    cdfs.forEach(function (c) {
      var tables = [];
      var series = [{label: c[1]}];
      withCdf.forEach(function (r, i) {
        var d = r.cdf[c[0]];
        if (!d || !d.x.length) return;
        tables.push([d.x, d.p]);
        series.push(lineSeries(r.name, runs.indexOf(r)));
      });
      if (!tables.length) return;
      chart(box, 'CDF of ' + c[1], 'share of finished requests at or under x (requests.csv)', {
        scales: {x: {time: false}, y: {range: [0, 1]}},
        axes: [{label: c[1]}, {label: 'share of requests'}],
        series: series
      }, uPlot.join(tables));
    });
  }

  // A y range from just under 0 to over the largest value, so that a series that stays at 0
  // (no preemptions) draws above the axis rather than on it.
  function padded(u, min, max) {
    var lo = Math.min(0, min === null ? 0 : min);
    var hi = Math.max(max === null ? 1 : max, lo + 1e-9);
    var span = hi - lo || 1;
    return [lo - 0.04 * span, hi + 0.08 * span];
  }

  // ---- time series from steps.csv ----
  var timeSeries = [
    ['running_mean', 'running requests', 'mean over the steps starting in each bucket'],
    ['waiting_mean', 'waiting requests', 'mean queue length over the steps in each bucket'],
    ['batch_mean', 'batch size (sequences/step)', 'mean entries per step in each bucket'],
    ['tokens_mean', 'tokens per step', 'prefill + decode tokens, mean per step in each bucket'],
    ['kv_use_max', 'KV use (share of capacity)', 'largest used/capacity in each bucket'],
    ['preemptions', 'preemptions', 'preemptions in each bucket']
  ];

  function seriesCharts(parent, runs) {
    var withSteps = runs.filter(function (r) { return r.series && r.series.t_s.length; });
    if (!withSteps.length) {
      parent.appendChild(el('p', {class: 'note'}, 'No steps.csv in these runs: run with --steps (or --report).'));
      return;
    }
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    timeSeries.forEach(function (m) {
      var tables = [];
      var series = [{label: 'time (s)'}];
      withSteps.forEach(function (r) {
        tables.push([r.series.t_s, r.series[m[0]]]);
        series.push(lineSeries(r.name + ' (' + fmt(r.series.bucket_s * 1e3, 1) + ' ms buckets)',
                               runs.indexOf(r)));
      });
      chart(box, m[1], m[2] + ' (steps.csv)', {
        scales: {x: {time: false}, y: {range: padded}},
        axes: [{label: 'simulated time (s)'}, {label: m[1]}],
        series: series
      }, uPlot.join(tables));
    });
  }

  // ---- roofline ----
  function rooflineCharts(parent, runs) {
    var costed = runs.filter(function (r) { return r.roofline; });
    if (!costed.length) {
      parent.appendChild(el('p', {class: 'note'}, 'No step costs in these runs: the roofline needs a cost-reporting step-time model (roofline, layer_profile) and --steps.'));
      return;
    }
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    costed.forEach(function (r) {
      var rf = r.roofline;
      var mbu = r.summary.mbu, mfu = r.summary.mfu;
      // summary.json's mbu and mfu are over the same busy time, so their ratio gives the peaks.
      var peakBw = mbu ? rf.bytes / (rf.busy_s * mbu) : null;
      var peakFlops = mfu ? rf.flops / (rf.busy_s * mfu) : null;
      var ridge = peakBw && peakFlops ? peakFlops / peakBw : null;
      var idx = rf.intensity.map(function (_, i) { return i; });
      idx.sort(function (a, b) { return rf.intensity[a] - rf.intensity[b]; });
      var x = [], bw = [], cp = [], roof = [];
      var last = -Infinity;
      idx.forEach(function (i) {
        var xi = rf.intensity[i];
        if (xi <= last) xi = last * (1 + 1e-9);  // uPlot wants strictly ascending x
        last = xi;
        x.push(xi);
        var tf = rf.flops_per_s[i] / 1e12;
        bw.push(rf.bound[i] === 0 ? tf : null);
        cp.push(rf.bound[i] === 1 ? tf : null);
        roof.push(ridge ? Math.min(peakFlops, xi * peakBw) / 1e12 : null);
      });
      var series = [{label: 'flops/byte'}, pointSeries('bandwidth-bound steps', '#1f77b4', 4),
                    pointSeries('compute-bound steps', '#d62728', 4)];
      var data = [x, bw, cp];
      if (ridge) {
        series.push({label: 'roof (peak)', stroke: '#555', width: 1.5, points: {show: false}});
        data.push(roof);
      }
      var caption = fmt(rf.sampled, 0) + ' of ' + fmt(rf.steps, 0) + ' costed steps (steps.csv bytes, flops, bound);' +
          (ridge ? ' ridge ' + fmt(ridge, 1) + ' flops/byte from summary.json mbu/mfu.' : ' no mbu/mfu: no ridge.');
      chart(box, 'roofline: ' + r.name, caption, {
        scales: {x: {time: false, distr: 3}, y: {distr: 3}},
        axes: [{label: 'arithmetic intensity (flops/byte)'}, {label: 'achieved TFLOP/s per accelerator'}],
        series: series
      }, data, function (u) { if (ridge) vline(u, ridge, '#555', 'ridge ' + fmt(ridge, 0)); });
    });
  }

  // ---- sweeps ----
  function scatterData(points, xKey, groups) {
    var pts = points.filter(function (p) { return typeof p[xKey] === 'number'; });
    pts.sort(function (a, b) { return a[xKey] - b[xKey]; });
    var x = [];
    var ys = groups.map(function () { return []; });
    var last = -Infinity;
    pts.forEach(function (p) {
      var xi = p[xKey];
      if (xi <= last) xi = last + Math.max(Math.abs(last) * 1e-9, 1e-12);
      last = xi;
      x.push(xi);
      groups.forEach(function (g, k) { ys[k].push(g(p)); });
    });
    return [x].concat(ys);
  }

  function truthy(v) { return v === true || v === 1 || v === 'true'; }

  function sweepCharts(parent, sweep, k) {
    var pts = sweep.points.filter(function (p) { return truthy(p.feasible); });
    var slo = sweep.slo || {};
    var pctl = slo.percentile ? 'p' + slo.percentile : 'p99';
    parent.appendChild(el('p', {class: 'note'}, fmt(sweep.points.length, 0) + ' points, ' +
        fmt(pts.length, 0) + ' feasible (points.csv); SLO: ' +
        (slo.ttft_ms ? 'TTFT ' + slo.ttft_ms + ' ms ' : '') + (slo.tpot_ms ? 'TPOT ' + slo.tpot_ms + ' ms ' : '') +
        (slo.ttft_ms || slo.tpot_ms ? 'at ' + pctl : 'none')));
    if (!pts.length) return;
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    var tput = function (p) { return typeof p.output_tokens_per_s === 'number' ? p.output_tokens_per_s : null; };
    var meets = function (p) { return truthy(p.meets_slo) ? tput(p) : null; };
    var misses = function (p) { return truthy(p.meets_slo) ? null : tput(p); };
    chart(box, 'throughput against p99 latency: ' + sweep.name,
          'each feasible point: output tokens/s against p99 E2E latency (points.csv)', {
      scales: {x: {time: false}},
      axes: [{label: 'p99 E2E latency (ms)'}, {label: 'output tokens/s'}],
      series: [{label: 'p99 E2E (ms)'}, pointSeries('meets SLO', '#2ca02c'), pointSeries('misses SLO', '#d62728')]
    }, scatterData(pts, 'e2e_p99_ms', [meets, misses]));
    var cost = function (p) { return typeof p.cost_per_hour_usd === 'number' ? p.cost_per_hour_usd : null; };
    var front = function (p) { return truthy(p.pareto) ? cost(p) : null; };
    var series = [{label: 'p99 TTFT (ms)'}, pointSeries('points', '#1f77b4'),
                  {label: 'Pareto front', stroke: '#ff7f0e', width: 2, spanGaps: true,
                   points: {show: true, size: 8, fill: '#ff7f0e'}}];
    chart(box, 'cost against p99 TTFT: ' + sweep.name,
          'feasible points and their Pareto front (cheapest for a given TTFT); dashed: the SLO', {
      scales: {x: {time: false}},
      axes: [{label: 'p99 TTFT (ms)'}, {label: 'cost (USD/hour)'}],
      series: series
    }, scatterData(pts, 'ttft_p99_ms', [cost, front]), function (u) {
      if (slo.ttft_ms) vline(u, slo.ttft_ms, '#d62728', 'SLO TTFT ' + slo.ttft_ms + ' ms');
    });
    if (slo.tpot_ms) {
      chart(box, 'cost against p99 TPOT: ' + sweep.name, 'dashed: the TPOT SLO', {
        scales: {x: {time: false}},
        axes: [{label: 'p99 TPOT (ms)'}, {label: 'cost (USD/hour)'}],
        series: [{label: 'p99 TPOT (ms)'}, pointSeries('points', '#9467bd')]
      }, scatterData(pts, 'tpot_p99_ms', [cost]), function (u) {
        vline(u, slo.tpot_ms, '#d62728', 'SLO TPOT ' + slo.tpot_ms + ' ms');
      });
    }
  }

  function section(title) {
    var s = el('section');
    s.appendChild(el('h2', null, title));
    root.appendChild(s);
    return s;
  }

  function main() {
    var data = JSON.parse(document.getElementById('report-data').textContent);
    var results = data.results || [];
    document.getElementById('report-sources').textContent =
        results.map(function (r) { return r.path; }).join(', ');
    var runs = results.filter(function (r) { return r.kind === 'run'; });
    var sweeps = results.filter(function (r) { return r.kind === 'sweep'; });
    if (runs.length) {
      section('Summary (summary.json)').appendChild(summaryTable(runs));
      cdfCharts(section('Latency distributions'), runs);
      seriesCharts(section('Over time (steps.csv)'), runs);
      rooflineCharts(section('Roofline (steps.csv)'), runs);
    }
    sweeps.forEach(function (s, k) { sweepCharts(section('Sweep: ' + s.name), s, k); });
  }

  try {
    main();
  } catch (e) {
    window.reportErrors.push('report.js: ' + (e && e.stack ? e.stack : String(e)));
  }
  done = true;
  updateStatus();
  // Charts draw on the next frames; count them again once they have.
  setTimeout(updateStatus, 500);
})();
