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

  // A dashed line from (x0, y0) to (x1, y1) in canvas pixels, its label at (lx, ly).
  function dashed(u, x0, y0, x1, y1, stroke, label, lx, ly, align) {
    var ctx = u.ctx;
    ctx.save();
    ctx.strokeStyle = stroke;
    ctx.setLineDash([5, 4]);
    ctx.lineWidth = 1.5 * devicePixelRatio;
    ctx.beginPath();
    ctx.moveTo(x0, y0);
    ctx.lineTo(x1, y1);
    ctx.stroke();
    ctx.fillStyle = stroke;
    ctx.font = (11 * devicePixelRatio) + 'px sans-serif';
    if (align) ctx.textAlign = align;
    ctx.fillText(label, lx, ly);
    ctx.restore();
  }

  // A vertical line at x = v (data units), labelled.
  function vline(u, v, stroke, label) {
    if (v === null || v === undefined) return;
    var x = Math.round(u.valToPos(v, 'x', true));
    var b = u.bbox;
    if (x < b.left || x > b.left + b.width) return;
    dashed(u, x, b.top, x, b.top + b.height, stroke, label,
           x + 4 * devicePixelRatio, b.top + 12 * devicePixelRatio);
  }

  // A horizontal line at y = v (data units of scale `scale`, 'y' unless given), labelled.
  function hline(u, v, stroke, label, scale) {
    if (v === null || v === undefined) return;
    var y = Math.round(u.valToPos(v, scale || 'y', true));
    var b = u.bbox;
    if (y < b.top || y > b.top + b.height) return;
    dashed(u, b.left, y, b.left + b.width, y, stroke, label,
           b.left + b.width - 4 * devicePixelRatio, y - 4 * devicePixelRatio, 'right');
  }

  // A range for a linear scale that holds the data and every value of `marks` (SLO lines), so
  // that a line is never outside the axes; a single value gets a span around it.
  function rangeWith(marks, fromZero) {
    return function (u, min, max) {
      var lo = min, hi = max;
      (marks || []).forEach(function (v) {
        if (typeof v !== 'number' || !isFinite(v)) return;
        lo = lo === null ? v : Math.min(lo, v);
        hi = hi === null ? v : Math.max(hi, v);
      });
      if (lo === null || hi === null) return [0, 1];
      if (fromZero) lo = Math.min(0, lo);
      var span = hi - lo;
      if (span <= 0) span = Math.abs(hi) || 1;
      return [lo - 0.05 * span, hi + 0.08 * span];
    };
  }

  // Writes labels[i] beside point i of the series `which` (indices into u.series) that have a
  // value there; at most `max` labels, so that a large sweep stays legible. A label longer than
  // 28 characters is cut with an ellipsis (the whole label is in the page's tables), and one
  // that would overlap a label already written is left out.
  function labelPoints(u, which, labels, max) {
    if (!labels || labels.length > (max || 60)) return;
    var ctx = u.ctx;
    var b = u.bbox;
    var dpr = devicePixelRatio;
    var taken = [];
    ctx.save();
    ctx.fillStyle = '#333';
    ctx.font = (10 * dpr) + 'px sans-serif';
    for (var i = 0; i < labels.length; i++) {
      which.forEach(function (s) {
        var v = u.data[s][i];
        if (v === null || v === undefined || !labels[i]) return;
        var x = u.valToPos(u.data[0][i], 'x', true);
        var y = u.valToPos(v, u.series[s].scale || 'y', true);
        if (x < b.left || x > b.left + b.width || y < b.top || y > b.top + b.height) return;
        var text = shortLabel(String(labels[i]), 28);
        var box = {x: x + 5 * dpr, y: y - 15 * dpr, w: ctx.measureText(text).width, h: 11 * dpr};
        if (taken.some(function (t) {
          return box.x < t.x + t.w && t.x < box.x + box.w && box.y < t.y + t.h && t.y < box.y + box.h;
        })) return;
        taken.push(box);
        ctx.fillText(text, x + 5 * dpr, y - 5 * dpr);
      });
    }
    ctx.restore();
  }

  // `text` cut to `n` characters, the last an ellipsis, when longer.
  function shortLabel(text, n) {
    return text.length > n ? text.slice(0, n - 1) + '\u2026' : text;
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
  // The same for an entry of summary.json's "replicas", of capacity.json's "probes" and of a
  // sweep's points.csv rows (tests/report/report_test.cpp checks each name against real output).
  function rkey(path) { return function (r) { return get(r, path); }; }
  function probeKey(path) { return function (p) { return get(p, path); }; }
  function pointKey(path) { return function (p) { var v = get(p, path); return typeof v === 'number' ? v : null; }; }
  // A column that both a capacity probe and a sweep point have (the charts against rate).
  function rateKey(path) { return function (p) { return get(p, path); }; }
  function times(reader, factor) { return function (o) { var v = reader(o); return typeof v === 'number' ? v * factor : null; }; }

  // ---- summary table ----
  var summaryRows = [
    ['requests'],
    ['scheduler', key('scheduler')],
    ['finished', key('finished'), 0],
    ['rejected', key('rejected'), 0],
    ['refused or rejected (all)', key('by_status.rejected'), 0],
    ['shed (rate limit)', key('by_status.shed'), 0],
    ['timed out', key('by_status.timed_out'), 0],
    ['cancelled', key('by_status.cancelled'), 0],
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
    ['ITL p50', ms('itl_s.p50'), 3], ['ITL p99', ms('itl_s.p99'), 3],
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
    ['goodput (req/s)', key('slo.goodput_requests_per_s'), 3],
    // The run's cost (write_report's run_cost: the catalogue's price x accelerators, as servesim
    // size prices a point); a run whose accelerator the catalogue does not price shows '-'.
    ['cost (catalogue price x accelerators)'],
    ['accelerator', runCost('hardware')],
    ['accelerators', runCost('accelerators'), 0],
    ['price tier', runCost('price_tier')],
    ['USD/hour', runCost('usd_per_hour'), 2],
    ['output tokens per USD', runCost('tokens_per_usd'), 0]
  ];
  function runCost(path) { return function (s, r) { return r && r.cost ? get(r.cost, path) : null; }; }

  function summaryTable(runs) {
    var t = el('table', {class: 'summary'});
    var group = null;  // a group's header row, added with its first row that has a value
    var head = el('tr');
    head.appendChild(el('th', null, ''));
    // A long run name wraps within its column (the whole path is the tooltip).
    runs.forEach(function (r) { head.appendChild(el('th', {class: 'run', title: r.path}, r.name)); });
    t.appendChild(head);
    summaryRows.forEach(function (row) {
      var tr = el('tr');
      if (row.length === 1) {
        tr.className = 'group';
        tr.appendChild(el('td', {colspan: String(runs.length + 1)}, row[0]));
        group = tr;
        return;
      }
      var values = runs.map(function (r) { return row[1](r.summary, r); });
      if (values.every(function (v) { return v === null; })) return;
      tr.appendChild(el('td', {class: 'label'}, row[0]));
      values.forEach(function (v) {
        tr.appendChild(el('td', typeof v === 'string' ? {class: 'text'} : null, fmt(v, row[2])));
      });
      if (group) t.appendChild(group);
      group = null;
      t.appendChild(tr);
    });
    return t;
  }

  // ---- latency CDFs ----
  // [cdf key, axis label, the run summary's SLO target for it (ms) or null]
  var cdfs = [['ttft_ms', 'TTFT (ms)', key('slo.ttft.target_ms')],
              ['tpot_ms', 'TPOT (ms)', key('slo.tpot.target_ms')],
              ['e2e_ms', 'E2E latency (ms)', null],
              ['queue_ms', 'queue delay (ms)', null]];

  function cdfSeries(label, i, points) {
    var s = lineSeries(label, i);
    s.paths = uPlot.paths.stepped({align: 1});
    // A distribution of one or a few values draws its points too: a step alone may be a dot.
    if (points <= 3) s.points = {show: true, size: 7, fill: color(i)};
    return s;
  }

  // A share's log axis: from the decade under the smallest share to just over 1 (a share is at
  // most 1; the headroom keeps a point at 1 off the frame).
  function tailRange(u, min) {
    var lo = min > 0 ? Math.pow(10, Math.floor(Math.log10(min))) : 1e-3;
    return [Math.min(lo, 0.1), 1.25];
  }

  function cdfCharts(parent, runs) {
    var withCdf = runs.filter(function (r) { return r.cdf; });
    if (!withCdf.length) {
      parent.appendChild(el('p', {class: 'note'}, 'No requests.csv in these runs (written unless --no-requests-csv).'));
      return;
    }
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    cdfs.forEach(function (c) {
      var tables = [], tails = [];
      var series = [{label: c[1]}], tailSeries = [{label: c[1]}];
      var slos = [];
      withCdf.forEach(function (r) {
        var d = r.cdf[c[0]];
        if (!d || !d.x.length) return;
        tables.push([d.x, d.p]);
        // The tail: the share at or above x, P(X >= x) = 1 - (share below x), never 0, so that
        // a log axis shows the last requests.
        tails.push([d.x, d.p.map(function (p, k) { var t = k ? 1 - d.p[k - 1] : 1; return t > 0 ? t : null; })]);
        series.push(cdfSeries(r.name, runs.indexOf(r), d.x.length));
        tailSeries.push(cdfSeries(r.name, runs.indexOf(r), d.x.length));
        var target = c[2] ? c[2](r.summary) : null;
        if (target !== null && slos.indexOf(target) < 0) slos.push(target);
      });
      if (!tables.length) return;
      var drawSlos = function (u) {
        slos.forEach(function (v) { vline(u, v, '#d62728', 'SLO ' + fmt(v) + ' ms'); });
      };
      chart(box, 'CDF of ' + c[1], 'share of finished requests at or under x (requests.csv)' +
            (slos.length ? '; dashed: the SLO target' : ''), {
        scales: {x: {time: false, range: rangeWith(slos)}, y: {range: [0, 1.02]}},
        axes: [{label: c[1]}, {label: 'share of requests'}],
        series: series
      }, uPlot.join(tables), drawSlos);
      chart(box, 'tail of ' + c[1] + ' (log scale)', 'share of finished requests at or above x, on a log axis: ' +
            '0.01 is the slowest 1%, 0.001 the slowest 0.1% (requests.csv)', {
        scales: {x: {time: false, range: rangeWith(slos)}, y: {distr: 3, range: tailRange}},
        axes: [{label: c[1]}, {label: 'share at or above x'}],
        series: tailSeries
      }, uPlot.join(tails), drawSlos);
    });
  }

  // ---- inter-token latency (summary.json itl_s: every gap between consecutive tokens) ----
  // The percentiles of an itl_s object as [[label, p, ms], ...] by p: p50, p90, p99, any asked
  // for with --percentiles, and the max as p100.
  function gapPoints(d) {
    if (!d || typeof d !== 'object' || !(d.count > 0)) return [];
    var pts = [['p50', 50, d.p50], ['p90', 90, d.p90], ['p99', 99, d.p99], ['max', 100, d.max]];
    Object.keys(d.percentiles || {}).forEach(function (name) {
      var p = parseFloat(name.slice(1));
      if (isFinite(p) && !pts.some(function (q) { return q[1] === p; })) pts.push([name, p, d.percentiles[name]]);
    });
    pts.sort(function (a, b) { return a[1] - b[1]; });
    return pts.map(function (q) { return [q[0], q[1], typeof q[2] === 'number' ? q[2] * 1e3 : null]; });
  }

  // One chart of ITL percentiles: a line per entry of `lines` ([label, itl_s object]), the
  // percentiles on a categorical axis (p50 ... max), the SLO targets as dashed lines.
  function gapChart(parent, title, caption, lines, slos) {
    var withData = lines.filter(function (l) { return gapPoints(l[1]).length; });
    if (!withData.length) return;
    var labels = [], ps = [];
    withData.forEach(function (l) {
      gapPoints(l[1]).forEach(function (q) {
        if (ps.indexOf(q[1]) < 0) { ps.push(q[1]); labels.push(q[0]); }
      });
    });
    var order = ps.map(function (_, i) { return i; }).sort(function (a, b) { return ps[a] - ps[b]; });
    ps = order.map(function (i) { return ps[i]; });
    labels = order.map(function (i) { return labels[i]; });
    var series = [{label: 'percentile'}], data = [ps.map(function (_, i) { return i; })];
    withData.forEach(function (l, i) {
      var s = lineSeries(l[0], i);
      s.points = {show: true, size: 7, fill: color(i)};
      series.push(s);
      var pts = gapPoints(l[1]);
      data.push(ps.map(function (p) {
        var q = pts.filter(function (x) { return x[1] === p; })[0];
        return q ? q[2] : null;
      }));
    });
    chart(parent, title, caption + (slos.length ? '; dashed: the SLO target' : ''), {
      scales: {x: {time: false, range: [-0.5, ps.length - 0.5]}, y: {range: rangeWith(slos, true)}},
      axes: [{label: 'percentile of the gaps', incrs: [1, 2, 5, 10], values: function (u, splits) {
        return splits.map(function (v) { return v === Math.round(v) && labels[v] !== undefined ? labels[v] : ''; });
      }}, {label: 'ITL (ms)'}],
      series: series
    }, data, function (u) {
      slos.forEach(function (v) { hline(u, v, '#d62728', 'SLO ITL ' + fmt(v) + ' ms'); });
    });
  }

  function sloTargets(runs, reader) {
    var out = [];
    runs.forEach(function (r) { var v = reader(r.summary); if (v !== null && out.indexOf(v) < 0) out.push(v); });
    return out;
  }

  function itlCharts(parent, runs) {
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    gapChart(box, 'ITL percentiles', 'inter-token latency: every gap between consecutive output ' +
             'tokens of the finished requests, pooled (summary.json itl_s)',
             runs.map(function (r) { return [r.name, r.summary.itl_s]; }),
             sloTargets(runs, key('slo.itl.target_ms')));
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

  // ---- replicas over time, from autoscale.csv ----
  function autoscaleCharts(parent, runs) {
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    var tables = [], series = [{label: 'time (s)'}];
    runs.forEach(function (r, i) {
      if (!r.autoscale) return;
      tables.push([r.autoscale.t_s, r.autoscale.paid, r.autoscale.live]);
      var paid = lineSeries(r.name + ' paid', i), live = lineSeries(r.name + ' live', i, true);
      if (uPlot.paths && uPlot.paths.stepped) {
        paid.paths = uPlot.paths.stepped({align: 1});
        live.paths = uPlot.paths.stepped({align: 1});
      }
      series.push(paid, live);
    });
    chart(box, 'replicas', 'paid (provisioning, live or draining) and live replicas after each ' +
          'autoscaler event (autoscale.csv)', {
      scales: {x: {time: false}, y: {range: padded}},
      axes: [{label: 'simulated time (s)'}, {label: 'replicas'}],
      series: series
    }, uPlot.join(tables));
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
  // [x, y...] for uPlot from `points` sorted by `xKey` (ties nudged apart: uPlot wants x
  // strictly ascending); data.labels[i] names point i (its label column, or `labelOf(p)`).
  function scatterData(points, xKey, groups, labelOf) {
    var xOf = typeof xKey === 'function' ? xKey : function (p) { return p[xKey]; };
    var pts = points.filter(function (p) { return typeof xOf(p) === 'number'; });
    pts.sort(function (a, b) { return xOf(a) - xOf(b); });
    var x = [];
    var ys = groups.map(function () { return []; });
    var labels = [];
    var last = -Infinity;
    pts.forEach(function (p) {
      var xi = xOf(p);
      if (xi <= last) xi = last + Math.max(Math.abs(last) * 1e-9, 1e-12);
      last = xi;
      x.push(xi);
      groups.forEach(function (g, k) { ys[k].push(g(p)); });
      labels.push(labelOf ? labelOf(p) : (p.label === null || p.label === undefined ? '' : p.label));
    });
    var data = [x].concat(ys);
    data.labels = labels;
    return data;
  }

  function truthy(v) { return v === true || v === 1 || v === 'true'; }

  // The columns holding the swept values: the axis columns, and `replicas` when the sweep has a
  // replicas axis (its values are in that column, not one of their own), in the label's order.
  function sweptColumns(sweep) {
    var axes = (sweep.axes || []).slice();
    var first = sweep.points.length && typeof sweep.points[0].label === 'string' ? sweep.points[0].label : '';
    var keys = first.split(';').map(function (part) { return part.split('=')[0]; });
    var at = keys.indexOf('replicas');
    if (at < 0 || axes.indexOf('replicas') >= 0) return axes;
    var before = keys.slice(0, at).filter(function (k) { return axes.indexOf(k) >= 0; }).length;
    axes.splice(before, 0, 'replicas');
    return axes;
  }

  // A sweep point's label: its label column, or its swept values.
  function pointLabel(sweep) {
    return function (p) {
      // The label column when short ("h100 tp1 x2"), else the swept values ("20, 4"), whose
      // order the caption gives.
      if (typeof p.label === 'string' && p.label && p.label.length <= 24) return p.label;
      return sweptColumns(sweep).map(function (a) { return fmt(p[a]); }).join(', ');
    };
  }

  // The axes that are the scenario (docs/sizing.md#axis-roles): summary.json's roles, or for a
  // sweep written before axes had roles, the keys `servesim size` infers scenario from.
  function scenarioAxes(sweep) {
    var axes = sweep.axes || [];
    if (sweep.scenario_axes) return sweep.scenario_axes.filter(function (a) { return axes.indexOf(a) >= 0; });
    return axes.filter(function (a) {
      var last = a.split('.').pop();
      return /^(workload|slo|seed)(\.|$)/.test(a) || last === 'rate' || /^rate_/.test(last) || /_rate/.test(last);
    });
  }

  // A table cell of text that wraps within its column, the whole text as its tooltip.
  function wrapCell(text) { return el('td', {class: 'wrap', title: text}, text); }

  // The cheapest deployment meeting the SLOs at each scenario point: points.csv's `cheapest`
  // column, or (a sweep written before it) the priced feasible point meeting the SLOs with the
  // lowest cost, then p99 TTFT, then point, as `servesim size` picks it.
  function cheapestTable(parent, sweep) {
    var scen = scenarioAxes(sweep);
    var scenOf = function (p) { return scen.map(function (a) { return a + '=' + fmt(p[a]); }).join('; '); };
    var deploymentOf = function (p) {
      var label = typeof p.label === 'string' ? p.label : '';
      if (!scen.length) return label;
      var parts = label.split(';').filter(function (part) { return scen.indexOf(part.split('=')[0]) < 0; });
      return parts.join('; ') || 'base';
    };
    var order = [];
    var best = {};
    var hasColumn = sweep.points.some(function (p) { return p.cheapest !== undefined; });
    var key = function (p) { return [p.cost_per_hour_usd, p.ttft_p99_ms, p.point]; };
    var less = function (a, b) {
      for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
      return false;
    };
    sweep.points.forEach(function (p) {
      var s = scenOf(p);
      if (!(s in best)) { best[s] = null; order.push(s); }
      var ok = hasColumn ? truthy(p.cheapest) :
          truthy(p.feasible) && truthy(p.meets_slo) && typeof p.cost_per_hour_usd === 'number';
      if (ok && (best[s] === null || less(key(p), key(best[s])))) best[s] = p;
    });
    var t = el('table', {class: 'summary cheapest'});
    var head = el('tr');
    var cols = ['scenario', 'cheapest deployment meeting the SLOs', 'replicas', 'accelerators',
                'USD/hour', 'p99 TTFT (ms)', 'p99 TPOT (ms)', 'output tokens per USD', 'point'];
    if (!scen.length) cols.shift();
    cols.forEach(function (c) { head.appendChild(el('th', null, c)); });
    t.appendChild(head);
    order.forEach(function (s) {
      var tr = el('tr');
      var p = best[s];
      if (scen.length) tr.appendChild(wrapCell(s));
      if (!p) {
        tr.appendChild(el('td', {class: 'text', colspan: String(cols.length - (scen.length ? 1 : 0))},
                          'no priced deployment meets the SLOs'));
      } else {
        tr.appendChild(wrapCell(deploymentOf(p)));
        [[p.replicas, 0], [p.accelerators, 0], [p.cost_per_hour_usd, 2], [p.ttft_p99_ms, 1],
         [p.tpot_p99_ms, 1], [p.tokens_per_usd, 0], [p.point, 0]].forEach(function (v) {
          tr.appendChild(el('td', null, fmt(v[0] === undefined ? null : v[0], v[1])));
        });
      }
      t.appendChild(tr);
    });
    parent.appendChild(el('h3', null, scen.length ?
        'Cheapest deployment per scenario (' + scen.join(', ') + ')' : 'Cheapest deployment'));
    parent.appendChild(t);
  }

  function sweepCharts(parent, sweep, k) {
    var pts = sweep.points.filter(function (p) { return truthy(p.feasible); });
    var slo = sweep.slo || {};
    var pctl = slo.percentile ? 'p' + slo.percentile : 'p99';
    parent.appendChild(el('p', {class: 'note'}, fmt(sweep.points.length, 0) + ' points, ' +
        fmt(pts.length, 0) + ' feasible (points.csv); SLO: ' +
        (slo.ttft_ms ? 'TTFT ' + slo.ttft_ms + ' ms ' : '') + (slo.tpot_ms ? 'TPOT ' + slo.tpot_ms + ' ms ' : '') +
        (slo.ttft_ms || slo.tpot_ms ? 'at ' + pctl : 'none')));
    if (!pts.length) return;
    if (pts.some(function (p) { return typeof p.cost_per_hour_usd === 'number'; })) cheapestTable(parent, sweep);
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    var labelOf = pointLabel(sweep);
    var tput = pointKey('output_tokens_per_s');
    var meets = function (p) { return truthy(p.meets_slo) ? tput(p) : null; };
    var misses = function (p) { return truthy(p.meets_slo) ? null : tput(p); };
    var longLabels = pts.some(function (p) { return typeof p.label === 'string' && p.label.length > 24; });
    var labelled = pts.length > 60 ? '' : longLabels && sweptColumns(sweep).length ?
        '; each point labelled with its ' + sweptColumns(sweep).join(', ') : '; each point labelled';
    var d = scatterData(pts, 'e2e_p99_ms', [meets, misses], labelOf);
    chart(box, 'throughput against p99 latency: ' + sweep.name,
          'each feasible point: output tokens/s against p99 E2E latency (points.csv)' + labelled, {
      scales: {x: {time: false, range: rangeWith([])}, y: {range: rangeWith([], true)}},
      axes: [{label: 'p99 E2E latency (ms)'}, {label: 'output tokens/s'}],
      series: [{label: 'p99 E2E (ms)'}, pointSeries('meets SLO', '#2ca02c'), pointSeries('misses SLO', '#d62728')]
    }, d, function (u) { labelPoints(u, [1, 2], d.labels); });
    var cost = pointKey('cost_per_hour_usd');
    if (!pts.some(function (p) { return cost(p) !== null; })) {
      box.appendChild(el('p', {class: 'note'}, 'No costs in points.csv (the sweep names no accelerator with a price): no cost charts.'));
      sweepRateCharts(box, sweep, pts, labelOf);
      return;
    }
    // The Pareto front is each scenario point's (docs/sizing.md#axis-roles): one line each, so
    // that no line joins fronts of different traffic (one line when there are too many).
    var scen = scenarioAxes(sweep);
    var scenOf = function (p) { return scen.map(function (a) { return a + '=' + fmt(p[a]); }).join('; '); };
    var scenarios = [];
    pts.forEach(function (p) { if (truthy(p.pareto) && scenarios.indexOf(scenOf(p)) < 0) scenarios.push(scenOf(p)); });
    if (scenarios.length > palette.length - 1) scenarios = null;
    var fronts = (scenarios || ['']).map(function (g) {
      return function (p) { return truthy(p.pareto) && (!scenarios || scenOf(p) === g) ? cost(p) : null; };
    });
    var series = [{label: 'p99 TTFT (ms)'}, pointSeries('points', '#1f77b4')];
    var frontColors = ['#ff7f0e'].concat(palette.filter(function (c) { return c !== '#1f77b4' && c !== '#ff7f0e'; }));
    (scenarios || ['']).forEach(function (g, i) {
      var c = frontColors[i % frontColors.length];
      series.push({label: g ? 'Pareto front, ' + shortLabel(g, 48) : 'Pareto front', stroke: c, width: 2,
                   spanGaps: true, points: {show: true, size: 8, fill: c}});
    });
    var dt = scatterData(pts, 'ttft_p99_ms', [cost].concat(fronts), labelOf);
    chart(box, 'cost against p99 TTFT: ' + sweep.name,
          'feasible points and their Pareto front (cheapest for a given TTFT' +
          (scenarios && scenarios.length > 1 ? ', one per scenario point' : '') + '); dashed: the SLO' + labelled, {
      scales: {x: {time: false, range: rangeWith([slo.ttft_ms])}, y: {range: rangeWith([], true)}},
      axes: [{label: 'p99 TTFT (ms)'}, {label: 'cost (USD/hour)'}],
      series: series
    }, dt, function (u) {
      if (slo.ttft_ms) vline(u, slo.ttft_ms, '#d62728', 'SLO TTFT ' + slo.ttft_ms + ' ms');
      labelPoints(u, [1], dt.labels);
    });
    if (slo.tpot_ms) {
      var dp = scatterData(pts, 'tpot_p99_ms', [cost], labelOf);
      chart(box, 'cost against p99 TPOT: ' + sweep.name, 'dashed: the TPOT SLO' + labelled, {
        scales: {x: {time: false, range: rangeWith([slo.tpot_ms])}, y: {range: rangeWith([], true)}},
        axes: [{label: 'p99 TPOT (ms)'}, {label: 'cost (USD/hour)'}],
        series: [{label: 'p99 TPOT (ms)'}, pointSeries('points', '#9467bd')]
      }, dp, function (u) {
        vline(u, slo.tpot_ms, '#d62728', 'SLO TPOT ' + slo.tpot_ms + ' ms');
        labelPoints(u, [1], dp.labels);
      });
    }
    sweepRateCharts(box, sweep, pts, labelOf);
  }

  // ---- against offered rate: a sweep with a rate axis, or a capacity search ----
  // Charts of SLO attainment, p99 TTFT and p99 TPOT against `xOf` (the offered rate), one
  // series per group (groupOf(p): a name), with the SLO targets as lines inside the axes.
  function rateCharts(box, name, pts, xOf, xLabel, groupOf, slo, extra) {
    var groups = [];
    pts.forEach(function (p) { var g = groupOf(p); if (groups.indexOf(g) < 0) groups.push(g); });
    if (groups.length > palette.length) {  // too many to tell apart: one series, unjoined
      groups = [''];
      groupOf = function () { return ''; };
      extra = Object.assign({}, extra, {pointsOnly: true});
    }
    var metrics = [
      ['SLO attainment', '% of requests meeting the SLO', times(rateKey('slo_attainment'), 100),
       slo.min_attainment ? [slo.min_attainment * 100] : [], 'minimum ', '%'],
      ['p99 TTFT', 'p99 TTFT (ms)', rateKey('ttft_p99_ms'), slo.ttft_ms ? [slo.ttft_ms] : [], 'SLO ', ' ms'],
      ['p99 TPOT', 'p99 TPOT (ms)', rateKey('tpot_p99_ms'), slo.tpot_ms ? [slo.tpot_ms] : [], 'SLO ', ' ms']];
    metrics.forEach(function (m) {
      var series = [{label: xLabel}];
      var fns = groups.map(function (g, i) {
        var c = extra && extra.colors && extra.colors[g] ? extra.colors[g] : color(i);
        series.push(extra && extra.pointsOnly ? pointSeries(g || m[0], c, 7) :
                    {label: g || m[0], stroke: c, width: 1.5, spanGaps: true, points: {show: true, size: 7, fill: c}});
        return function (p) { var v = m[2](p); return groupOf(p) === g && typeof v === 'number' ? v : null; };
      });
      var d = scatterData(pts, xOf, fns, function (p) { return extra && extra.label ? extra.label(p) : ''; });
      chart(box, m[0] + ' against offered rate: ' + name,
            'each run: ' + m[1] + ' at its offered request rate' + (m[3].length ? '; dashed: the ' + m[4].trim() : '') +
            (extra && extra.caption ? '; ' + extra.caption : ''), {
        scales: {x: {time: false, range: rangeWith(extra && extra.xMarks ? extra.xMarks : [])},
                 y: {range: rangeWith(m[3], true)}},
        axes: [{label: xLabel}, {label: m[1]}],
        series: series
      }, d, function (u) {
        m[3].forEach(function (v) { hline(u, v, '#d62728', m[4] + fmt(v) + m[5]); });
        if (extra && extra.draw) extra.draw(u);
        labelPoints(u, fns.map(function (_, i) { return i + 1; }), d.labels, 30);
      });
    });
  }

  function sweepRateCharts(box, sweep, pts, labelOf) {
    var axes = sweep.axes || [];
    var rateAxis = null;
    axes.forEach(function (a) {
      if (!rateAxis && /rate/.test(a) && pts.every(function (p) { return typeof p[a] === 'number'; })) rateAxis = a;
    });
    var others = sweptColumns(sweep).filter(function (a) { return a !== rateAxis; });
    // An axis column is named by its config key, dots included: read it whole, not as a path.
    var xOf = rateAxis ? function (p) { return typeof p[rateAxis] === 'number' ? p[rateAxis] : null; } :
        pointKey('requests_per_s');
    var xLabel = rateAxis ? rateAxis + ' (swept)' : 'served requests/s (no rate axis in this sweep)';
    var groupOf = function (p) {
      return others.map(function (a) { return a.split('.').pop() + '=' + fmt(p[a]); }).join(' ');
    };
    rateCharts(box, sweep.name, pts, xOf, xLabel, rateAxis ? groupOf : function () { return ''; }, sweep.slo || {},
               {label: rateAxis ? null : labelOf, caption: 'points.csv', pointsOnly: !rateAxis});
  }

  function capacityCharts(parent, cap) {
    var slo = cap.slo || {};
    var probes = cap.probes || [];
    var rate = probeKey('offered_rate_per_s');
    var found = cap.capacity ? rate(cap.capacity) : null;
    parent.appendChild(el('p', {class: 'note'}, fmt(probes.length, 0) + ' probes (capacity.json); ' +
        (found !== null ? 'capacity ' + fmt(found) + ' requests/s' + (cap.found ? '' : ' (the search did not close)') :
         'no probe met the SLO')));
    if (!probes.length) return;
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    var verdict = function (p) { return truthy(rateKey('meets_slo')(p)) ? 'meets SLO' : 'misses SLO'; };
    rateCharts(box, cap.name, probes, rate, 'offered rate (requests/s)', verdict, slo, {
      caption: 'probes in capacity.json; the green line is the capacity found',
      pointsOnly: true,
      colors: {'meets SLO': '#2ca02c', 'misses SLO': '#d62728'},
      xMarks: found !== null ? [found] : [],
      draw: function (u) { if (found !== null) vline(u, found, '#2ca02c', 'capacity ' + fmt(found)); }
    });
  }

  // ---- per class (summary.json "classes", requests.csv's class column) ----
  // An entry of summary.json's "classes" (tests/report/report_test.cpp checks each name).
  function ckey(path) { return function (c) { return get(c, path); }; }
  function classNames(r) {
    var c = r.summary.classes;
    return c && typeof c === 'object' ? Object.keys(c) : [];
  }

  function classCharts(parent, runs) {
    var withClasses = runs.filter(function (r) { return classNames(r).length; });
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    var many = withClasses.length > 1;
    var label = function (r, name) { return (many ? r.name + ': ' : '') + name; };
    // TTFT and TPOT CDFs, one series per class (and run), on one chart each.
    [['ttft_ms', 'TTFT (ms)', key('slo.ttft.target_ms')],
     ['tpot_ms', 'TPOT (ms)', key('slo.tpot.target_ms')]].forEach(function (c) {
      var tables = [], series = [{label: c[1]}], slos = [], k = 0;
      withClasses.forEach(function (r) {
        var cdf = r.cdf && r.cdf.classes ? r.cdf.classes : {};
        classNames(r).forEach(function (name) {
          var i = k++;
          var d = cdf[name] ? cdf[name][c[0]] : null;
          if (!d || !d.x.length) return;
          tables.push([d.x, d.p]);
          series.push(cdfSeries(label(r, name), i, d.x.length));
        });
        var target = c[2](r.summary);
        if (target !== null && slos.indexOf(target) < 0) slos.push(target);
      });
      if (!tables.length) return;
      chart(box, 'CDF of ' + c[1] + ' per class', 'share of each class\'s finished requests at or under x ' +
            '(requests.csv, its class column)' + (slos.length ? '; dashed: the SLO target' : ''), {
        scales: {x: {time: false, range: rangeWith(slos)}, y: {range: [0, 1.02]}},
        axes: [{label: c[1]}, {label: 'share of the class\'s requests'}],
        series: series
      }, uPlot.join(tables), function (u) {
        slos.forEach(function (v) { vline(u, v, '#d62728', 'SLO ' + fmt(v) + ' ms'); });
      });
    });
    // ITL percentiles, one line per class (and run).
    var gapLines = [];
    withClasses.forEach(function (r) {
      classNames(r).forEach(function (name) { gapLines.push([label(r, name), r.summary.classes[name].itl_s]); });
    });
    gapChart(box, 'ITL percentiles per class', 'each class\'s gaps between consecutive output tokens ' +
             '(summary.json classes, itl_s)', gapLines, sloTargets(withClasses, key('slo.itl.target_ms')));
    // SLO attainment per class: every target, and each target alone when one run is shown.
    var withSlo = withClasses.filter(function (r) { return key('slo')(r.summary) !== null; });
    if (!withSlo.length) return;
    var names = [];
    withSlo.forEach(function (r) {
      classNames(r).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
    });
    var cols = [];
    withSlo.forEach(function (r) {
      var of = function (reader) {
        return function (name) {
          var c = r.summary.classes[name];
          if (!c || !ckey('requests')(c)) return null;
          return times(reader, 100)(c);
        };
      };
      cols.push([many ? r.name + ': every target' : 'every target', of(ckey('slo.attainment'))]);
      if (!many) {
        if (key('slo.ttft')(r.summary) !== null) cols.push(['TTFT target', of(ckey('slo.ttft.attainment'))]);
        if (key('slo.tpot')(r.summary) !== null) cols.push(['TPOT target', of(ckey('slo.tpot.attainment'))]);
        if (key('slo.itl')(r.summary) !== null) cols.push(['ITL target', of(ckey('slo.itl.attainment'))]);
      }
    });
    var series = [{label: 'class'}], data = [names.map(function (_, i) { return i; })];
    cols.forEach(function (c, i) {
      series.push(pointSeries(c[0], color(i), 8));
      data.push(names.map(function (n) { var v = c[1](n); return typeof v === 'number' ? v : null; }));
    });
    chart(box, 'SLO attainment per class', '% of each class\'s requests meeting the SLO (summary.json classes)', {
      scales: {x: {time: false, range: [-0.5, names.length - 0.5]}, y: {range: rangeWith([0, 100], true)}},
      axes: [{label: 'class', incrs: [1, 2, 5, 10], values: function (u, splits) {
        return splits.map(function (v) { return v === Math.round(v) && names[v] !== undefined ? names[v] : ''; });
      }}, {label: '% meeting'}],
      series: series
    }, data);
  }

  // ---- per tenant (summary.json "tenants" and "fairness") ----
  // A path of a tenant's entry, or of the run's "fairness" block (tests/metrics/tenant_test.cpp
  // checks each name).
  function tkey(path) { return function (o) { return get(o, path); }; }
  function tenantNames(r) {
    var t = r.summary.tenants;
    return t && typeof t === 'object' ? Object.keys(t) : [];
  }

  // One chart: each tenant's share of the tokens served, and what it was served in the fairness
  // window against its max-min fair share (docs/metrics.md#tenants-and-fairness), in %.
  function tenantCharts(parent, runs) {
    var withTenants = runs.filter(function (r) { return tenantNames(r).length; });
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    var many = withTenants.length > 1;
    var names = [];
    withTenants.forEach(function (r) {
      tenantNames(r).forEach(function (n) { if (names.indexOf(n) < 0) names.push(n); });
    });
    var cols = [];
    withTenants.forEach(function (r) {
      var pre = many ? r.name + ': ' : '';
      var jain = tkey('fairness.jain_index')(r.summary);
      var of = function (f) {
        return function (n) { var t = r.summary.tenants[n]; return t ? f(t) : null; };
      };
      cols.push([pre + 'share of tokens served', of(times(tkey('service_share'), 100))]);
      cols.push([pre + 'window service / fair share' +
                 (jain !== null ? ' (Jain ' + jain.toFixed(3) + ')' : ''), of(function (t) {
        var f = tkey('fair_share_tokens')(t), w = tkey('window_tokens')(t);
        return typeof f === 'number' && f > 0 && typeof w === 'number' ? 100 * w / f : null;
      })]);
    });
    var series = [{label: 'tenant'}], data = [names.map(function (_, i) { return i; })];
    cols.forEach(function (c, i) {
      series.push(pointSeries(c[0], color(i), 8));
      data.push(names.map(function (n) { var v = c[1](n); return typeof v === 'number' ? v : null; }));
    });
    chart(box, 'Service per tenant', '% of the tokens served, and the tokens served while every ' +
          'tenant was sending in % of the tenant\'s max-min fair share (summary.json tenants, fairness)', {
      scales: {x: {time: false, range: [-0.5, names.length - 0.5]}, y: {range: rangeWith([0, 100], true)}},
      axes: [{label: 'tenant', incrs: [1, 2, 5, 10], values: function (u, splits) {
        return splits.map(function (v) { return v === Math.round(v) && names[v] !== undefined ? names[v] : ''; });
      }}, {label: '%'}],
      series: series
    }, data);
  }

  // ---- per replica (summary.json "replicas" of a cluster) ----
  function replicaName(reps, i) {
    var pool = rkey('pool')(reps[i]);
    if (!pool) return String(i);
    var k = i;
    while (k > 0 && reps[k - 1].pool === pool) k--;
    return pool + '[' + (i - k) + ']';
  }

  // A replica's (or pool's) p99 of a distribution in ms; null where it has none (count 0: a
  // decode replica's TTFT, a prefill replica's TPOT), as the printed table's "-".
  function p99ms(count, p99) {
    return function (rep) { return count(rep) ? times(p99, 1e3)(rep) : null; };
  }
  // Its SLO attainment in %; null when no request left from it (the table's "-").
  function attainmentPct(rep) { return rkey('requests')(rep) ? times(rkey('slo.attainment'), 100)(rep) : null; }

  function replicaCharts(parent, runs) {
    var clusters = runs.filter(function (r) { return (r.summary.replicas || []).length > 1; });
    if (!clusters.length) return;
    var box = el('div', {class: 'charts'});
    parent.appendChild(box);
    clusters.forEach(function (r) {
      var reps = r.summary.replicas;
      var names = reps.map(function (_, i) { return replicaName(reps, i); });
      var x = reps.map(function (_, i) { return i; });
      var axisX = {label: 'replica', values: function (u, splits) {
        return splits.map(function (v) { return v === Math.round(v) && names[v] !== undefined ? names[v] : ''; });
      }, incrs: [1, 2, 5, 10, 20, 50, 100]};
      var plot = function (title, caption, yLabel, cols, marks) {
        var series = [{label: 'replica'}];
        var data = [x];
        cols.forEach(function (c, i) {
          series.push(pointSeries(c[0], color(i), 8));
          data.push(reps.map(function (rep) { var v = c[1](rep); return typeof v === 'number' ? v : null; }));
        });
        chart(box, title + ': ' + r.name, caption + ' (summary.json replicas)', {
          scales: {x: {time: false, range: [-0.5, reps.length - 0.5]}, y: {range: rangeWith(marks.map(function (m) { return m[0]; }), true)}},
          axes: [axisX, {label: yLabel}],
          series: series
        }, data, function (u) { marks.forEach(function (m) { hline(u, m[0], '#d62728', m[1]); }); });
      };
      plot('requests per replica', 'routed to each replica and finished there', 'requests',
           [['routed', rkey('routed')], ['finished', rkey('finished')]], []);
      var kvShare = function (rep) {
        var used = rkey('kv_peak_used_tokens')(rep), cap = rkey('kv_capacity_tokens')(rep);
        return typeof used === 'number' && cap ? 100 * used / cap : null;
      };
      plot('load per replica', 'busy share, KV peak (share of its capacity) and SLO attainment', '%',
           [['busy %', times(rkey('busy_share'), 100)], ['KV peak %', kvShare],
            ['SLO attainment %', attainmentPct]], []);
      var marks = [];
      var ttft = key('slo.ttft.target_ms')(r.summary), tpot = key('slo.tpot.target_ms')(r.summary);
      if (ttft !== null) marks.push([ttft, 'SLO TTFT ' + fmt(ttft) + ' ms']);
      if (tpot !== null) marks.push([tpot, 'SLO TPOT ' + fmt(tpot) + ' ms']);
      plot('p99 latency per replica', 'TTFT of the requests routed to it, TPOT of those it finished; dashed: the SLO',
           'ms', [['p99 TTFT (ms)', p99ms(rkey('ttft_s.count'), rkey('ttft_s.p99'))],
                  ['p99 TPOT (ms)', p99ms(rkey('tpot_s.count'), rkey('tpot_s.p99'))]], marks);
      poolChart(box, r);
    });
  }

  // With cluster.pools: each pool's busy share and SLO attainment (summary.json "pools").
  function poolChart(box, r) {
    var pools = r.summary.pools || [];
    if (pools.length < 2) return;
    var names = pools.map(function (p) { return rkey('pool')(p) + ' (' + rkey('role')(p) + ')'; });
    var cols = [['busy %', times(rkey('busy_share'), 100)], ['SLO attainment %', attainmentPct]];
    var series = [{label: 'pool'}], data = [pools.map(function (_, i) { return i; })];
    cols.forEach(function (c, i) {
      series.push(pointSeries(c[0], color(i), 8));
      data.push(pools.map(function (p) { var v = c[1](p); return typeof v === 'number' ? v : null; }));
    });
    chart(box, 'per pool: ' + r.name, 'its replicas\' mean busy share and its requests\' SLO attainment (summary.json pools)', {
      scales: {x: {time: false, range: [-0.5, pools.length - 0.5]}, y: {range: rangeWith([], true)}},
      axes: [{label: 'pool', incrs: [1, 2, 5, 10], values: function (u, splits) {
        return splits.map(function (v) { return v === Math.round(v) && names[v] !== undefined ? names[v] : ''; });
      }}, {label: '%'}],
      series: series
    }, data);
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
    var capacities = results.filter(function (r) { return r.kind === 'capacity'; });
    if (runs.length) {
      section('Summary (summary.json)').appendChild(summaryTable(runs));
      var latency = section('Latency distributions');
      cdfCharts(latency, runs);
      itlCharts(latency, runs);
      if (runs.some(function (r) { return classNames(r).length; }))
        classCharts(section('Per class (summary.json, requests.csv)'), runs);
      if (runs.some(function (r) { return tenantNames(r).length; }))
        tenantCharts(section('Per tenant (summary.json)'), runs);
      if (runs.some(function (r) { return (r.summary.replicas || []).length > 1; }))
        replicaCharts(section('Per replica (summary.json)'), runs);
      seriesCharts(section('Over time (steps.csv)'), runs);
      if (runs.some(function (r) { return r.autoscale; }))
        autoscaleCharts(section('Replicas over time (autoscale.csv)'), runs);
      rooflineCharts(section('Roofline (steps.csv)'), runs);
    }
    sweeps.forEach(function (s, k) { sweepCharts(section('Sweep: ' + s.name), s, k); });
    capacities.forEach(function (c) { capacityCharts(section('Capacity: ' + c.name), c); });
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
