/* SPDX-License-Identifier: MIT */
/*
 * dcprof flame graph: draws the tree embedded in #fg-data on one canvas.
 * The tree comes flat, depth first, children after their parent and
 * siblings left to right: per node name, file (string indexes), type
 * (an index into D.types and TYPE_NAMES: 0 root, 1 process, 2 user,
 * 3 kernel, 4 JIT or anonymous, 5 inline, 6 unknown, 7 idle, 8 Python),
 * depth, samples (and samples before, for a diff, or ns off the CPU, for a
 * profile recorded with --off-cpu). A node's subtree is the run of nodes
 * after it that are deeper, so a frame too narrow to see skips its whole
 * subtree and drawing costs what is visible, not what is stored.
 *
 * With off-CPU time the page switches between three values: CPU (samples),
 * off-CPU (ns) and wall (samples times the sampling period plus ns off the
 * CPU), computed here from the two stored per node. Frames whose value is
 * mostly time off the CPU take the off-CPU colours.
 */
(function () {
  'use strict';

  var ROW = 18;
  var MIN_WIDTH = 0.5; /* CSS pixels: narrower frames (and their children) are not drawn */
  var FONT = '12px "DejaVu Sans Mono", Menlo, Consolas, monospace';
  var MATCH_COLOUR = 'rgb(230,0,230)';
  /* By the type number a node carries (D.types): new types are appended. */
  var TYPE_NAMES = ['all', 'process', 'user', 'kernel', 'JIT / anon', 'inline', 'unknown', 'idle', 'Python'];
  var VALUE_TITLES = { 'cpu': 'CPU samples', 'off-cpu': 'off-CPU time', 'wall': 'wall-clock time' };

  var D = JSON.parse(document.getElementById('fg-data').textContent);
  var parsedMs = performance.now();
  var S = D.strings;
  var K = D.stride;
  var n = (D.nodes.length / K) | 0;
  var diff = !!D.diff;
  var OC = diff ? null : D.offCpu || null; /* the values to switch between */
  var view = OC ? OC.value : 'cpu';
  var total = D.total;
  var totalBefore = D.totalBefore || 0;

  var nameI = new Int32Array(n);
  var fileI = new Int32Array(n);
  var type = new Uint8Array(n);
  var depth = new Int32Array(n);
  var val = new Float64Array(n); /* the value shown: samples, or ns with OC */
  var before = diff ? new Float64Array(n) : null;
  var samples = OC ? new Float64Array(n) : val;
  var offNs = OC ? new Float64Array(n) : null;
  var left = new Float64Array(n); /* value to the left of the node within the root */
  var parent = new Int32Array(n);
  var end = new Int32Array(n); /* index after the node's last descendant */
  var maxDepth = 0;

  (function build() {
    var R = D.nodes;
    var stack = [];
    var i, o, d, p;

    for (i = 0; i < n; i++) {
      o = i * K;
      nameI[i] = R[o];
      fileI[i] = R[o + 1];
      type[i] = R[o + 2];
      d = depth[i] = R[o + 3];
      samples[i] = R[o + 4];
      if (diff)
        before[i] = R[o + 5];
      else if (OC)
        offNs[i] = R[o + 5];
      p = d ? stack[d - 1] : -1;
      parent[i] = p;
      stack[d] = i;
      if (d > maxDepth)
        maxDepth = d;
    }
    for (i = n - 1; i >= 0; i--) {
      if (end[i] < i + 1)
        end[i] = i + 1;
      p = parent[i];
      if (p >= 0 && end[p] < end[i])
        end[p] = end[i];
    }
    D.nodes = null; /* let the big array go */
  })();

  /* Fill val for a view and lay the frames out by it: left edges in
   * depth-first order, each child after its elder siblings. */
  function computeValues(v) {
    var used = new Float64Array(n);
    var sampleNs = OC ? OC.sampleNs : 0;
    var i, p;

    if (OC) {
      for (i = 0; i < n; i++)
        val[i] = v === 'cpu' ? samples[i] : v === 'off-cpu' ? offNs[i] :
          samples[i] * sampleNs + offNs[i];
    }
    for (i = 1; i < n; i++) {
      p = parent[i];
      left[i] = left[p] + used[p];
      used[p] += val[i];
    }
    total = val[0];
  }
  computeValues(view);

  function sampleCount(v) {
    return v.toLocaleString('en-US') + (v === 1 ? ' sample' : ' samples');
  }

  function ms(ns) {
    return (ns / 1e6).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + ' ms';
  }

  /* Values in the view's unit: samples, or ms for time. */
  function amount(v) {
    return view === 'cpu' ? sampleCount(v) : ms(v);
  }

  /* Most of the frame's value in this view is time off the CPU. Every type
   * after the root (0) and the process names (1) is a frame of code,
   * Python's (8) too. */
  function offFrame(i) {
    return !!OC && view !== 'cpu' && type[i] > 1 && offNs[i] > val[i] / 2;
  }

  function pct(v, of) {
    return of > 0 ? 100 * v / of : 0;
  }

  /* ---- colours ------------------------------------------------------------ */

  function nameHash(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length; i++)
      h = Math.imul(h ^ (s.charCodeAt(i) & 0xff), 16777619) >>> 0;
    return h;
  }

  /* The same palette as the SVG writer: warm user code, blue kernel, green
   * JIT, orchid Python. */
  function typeColour(i) {
    var h = nameHash(S[nameI[i]]);
    var a = (h & 0xff) / 255, b = ((h >>> 8) & 0xff) / 255, c = ((h >>> 16) & 0xff) / 255;
    var r, g, bl;
    switch (type[i]) {
    case 0: r = 190; g = 190; bl = 200; break;
    case 1: r = 196 + 30 * a; g = 180 + 30 * a; bl = 150 + 30 * a; break;
    case 3: r = 70 + 60 * a; g = 140 + 50 * b; bl = 215 + 40 * c; break;
    case 4: r = 80 + 60 * a; g = 190 + 50 * b; bl = 60 + 50 * c; break;
    case 5: r = 40 + 50 * a; g = 205 + 45 * b; bl = 190 + 40 * c; break;
    case 6: case 7: r = g = bl = 175 + 40 * a; break;
    case 8: r = 180 + 45 * a; g = 110 + 35 * a; bl = 220 + 35 * c; break;
    default: r = 205 + 50 * c; g = 230 * a; bl = 55 * b; break;
    }
    return 'rgb(' + (r | 0) + ',' + (g | 0) + ',' + (bl | 0) + ')';
  }

  function delta(i) {
    return pct(val[i], total) - pct(before[i], totalBefore);
  }

  var maxDelta = 0;
  if (diff)
    for (var di = 0; di < n; di++)
      maxDelta = Math.max(maxDelta, Math.abs(delta(di)));

  function changeOf(d) {
    return Math.abs(d) < 0.005 ? 'same' : d > 0 ? 'grew' : 'shrank';
  }

  /* Red grew, blue shrank, stronger for more (square root: small changes show). */
  function diffColour(i) {
    var d = delta(i);
    var m = maxDelta > 0 ? Math.min(1, Math.abs(d) / maxDelta) : 0;
    var fade = (235 - 195 * Math.sqrt(m)) | 0;
    var ch = changeOf(d);
    if (ch === 'same')
      return 'rgb(235,235,235)';
    return ch === 'grew' ? 'rgb(255,' + fade + ',' + fade + ')' : 'rgb(' + fade + ',' + fade + ',255)';
  }

  /* Off-CPU frames in blue-violet, as in off-CPU flame graphs; kernel
   * frames darker. Red equals green: apart from the sky-blue of on-CPU
   * kernel frames. */
  function offColour(i) {
    var h = nameHash(S[nameI[i]]);
    var a = (h & 0xff) / 255, b = ((h >>> 8) & 0xff) / 255;
    var rg = type[i] === 3 ? 50 + 40 * a : 95 + 55 * a;
    var bl = type[i] === 3 ? 150 + 50 * b : 200 + 55 * b;
    return 'rgb(' + (rg | 0) + ',' + (rg | 0) + ',' + (bl | 0) + ')';
  }

  var colours = new Array(n);
  var darkFill = new Uint8Array(n); /* light text reads better on it */
  function colour(i) {
    var c = colours[i], m;
    if (!c) {
      c = colours[i] = diff ? diffColour(i) : offFrame(i) ? offColour(i) : typeColour(i);
      m = /(\d+),(\d+),(\d+)/.exec(c);
      darkFill[i] = 0.299 * m[1] + 0.587 * m[2] + 0.114 * m[3] < 110;
    }
    return c;
  }

  /* ---- page ----------------------------------------------------------------- */

  var $ = function (id) { return document.getElementById(id); };
  var canvas = $('fg-canvas');
  var ctx = canvas.getContext('2d', { alpha: false });
  var tip = $('fg-tip');
  var status = $('fg-status');
  var searchBox = $('fg-search');
  var matchLabel = $('fg-match');
  var resetButton = $('fg-reset');
  var flipButton = $('fg-flip');
  var defaultStatus = status.textContent;

  var valueButtons = {};

  function titles() {
    var t = D.title || 'dcprof flame graph';
    if (OC)
      t += ': ' + VALUE_TITLES[view];
    $('fg-title').textContent = t;
    document.title = t;
  }

  (function notes() {
    var box = $('fg-notes');

    box.textContent = (D.notes || []).join('\n');
    if (diff) {
      var ob = D.onlyBefore || { frames: 0, samples: 0 };
      var w = document.createElement('div');
      w.className = ob.frames ? 'fg-warn' : '';
      w.textContent = ob.frames ?
        ob.frames + ' frame' + (ob.frames === 1 ? '' : 's') + ' of BEFORE (' +
        pct(ob.samples, totalBefore).toFixed(2) + '% of its samples) have no counterpart in AFTER and are not drawn' :
        'every frame of BEFORE is in AFTER';
      box.appendChild(w);
    }
  })();

  /* The colours in use in this view, and its total in its unit. */
  function legend() {
    var box = $('fg-legend');
    var items = [];
    var seen = {};
    var i;

    box.textContent = '';
    if (diff) {
      items = [['rgb(255,40,40)', 'share grew'], ['rgb(255,170,170)', 'grew a little'],
               ['rgb(235,235,235)', 'unchanged'], ['rgb(170,170,255)', 'shrank a little'],
               ['rgb(40,40,255)', 'share shrank']];
    } else {
      for (i = 0; i < n; i++)
        seen[type[i]] = true;
      if (view !== 'off-cpu') {
        items = [['rgb(230,120,30)', 'user'], ['rgb(100,165,235)', 'kernel'],
                 ['rgb(110,215,85)', 'JIT / anon'], ['rgb(65,228,210)', 'inline']];
        /* only a profile of a Python process has them */
        if (seen[8])
          items.push(['rgb(202,127,237)', 'Python']);
      }
      if (OC && view !== 'cpu')
        items.push(['rgb(122,122,228)', 'off-CPU'], ['rgb(70,70,175)', 'off-CPU kernel']);
      if (seen[6] || seen[7])
        items.push(['rgb(195,195,195)', 'unknown / idle']);
      items.push(['rgb(211,195,165)', 'process']);
    }
    items.push([MATCH_COLOUR, 'search match']);
    items.forEach(function (it) {
      var s = document.createElement('span');
      var sw = document.createElement('i');
      sw.style.background = it[0];
      s.appendChild(sw);
      s.appendChild(document.createTextNode(it[1]));
      box.appendChild(s);
    });
    var t = document.createElement('span');
    t.id = 'fg-total';
    t.textContent = amount(total) + (view === 'off-cpu' ? ' off the CPU, ' : ', ') +
      n.toLocaleString('en-US') + ' frames';
    box.appendChild(t);
  }

  /* The value switch: shown only when there is more than one value. */
  (function switcher() {
    var box = $('fg-values');
    if (!OC)
      return;
    box.hidden = false;
    Array.prototype.forEach.call(box.querySelectorAll('button'), function (b) {
      valueButtons[b.getAttribute('data-value')] = b;
      b.addEventListener('click', function () { setValue(b.getAttribute('data-value')); });
    });
  })();

  function pressButtons() {
    for (var k in valueButtons)
      valueButtons[k].setAttribute('aria-pressed', k === view ? 'true' : 'false');
  }

  /* ---- state and drawing ------------------------------------------------------ */

  var zoom = 0;
  var icicle = false;
  var match = null; /* Uint8Array: node's name matches the search */
  var W = 0, H = 0, charW = 7;
  var drawn = 0;
  var rowNodes = [], rowX = [], rowW = []; /* what is on screen, per depth, for hit tests */
  var hover = -1;

  function layout() {
    var dpr = window.devicePixelRatio || 1;
    W = Math.max(100, canvas.clientWidth);
    H = (maxDepth + 1) * ROW;
    canvas.style.height = H + 'px';
    canvas.width = Math.round(W * dpr);
    canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    charW = ctx.measureText('mmmmmmmmmm').width / 10;
  }

  function rowY(d) {
    return icicle ? d * ROW : (maxDepth - d) * ROW;
  }

  function label(i, w) {
    var s = S[nameI[i]];
    var fit = Math.floor((w - 6) / charW);
    if (fit < 3)
      return '';
    return s.length <= fit ? s : s.slice(0, fit - 2) + '..';
  }

  function frame(i, x, w, dimmed) {
    var d = depth[i];
    var y = rowY(d);
    var text;

    ctx.globalAlpha = dimmed ? 0.45 : 1;
    ctx.fillStyle = match && match[i] ? MATCH_COLOUR : colour(i);
    ctx.fillRect(x, y, w > 2 ? w - 1 : w, ROW - 1);
    if (i === hover) {
      ctx.strokeStyle = '#111';
      ctx.lineWidth = 1;
      ctx.strokeRect(x + 0.5, y + 0.5, Math.max(0, w - 2), ROW - 2);
    }
    text = label(i, w);
    if (text) {
      ctx.fillStyle = (match && match[i]) || darkFill[i] ? '#fff' : '#111';
      ctx.fillText(text, x + 3, y + ROW / 2);
    }
    rowNodes[d].push(i);
    rowX[d].push(x);
    rowW[d].push(w);
    drawn++;
  }

  function draw() {
    var z = zoom;
    var scale = W / val[z];
    var x0 = left[z];
    var i, e, w, d, a;

    ctx.globalAlpha = 1;
    ctx.fillStyle = '#f8f8f4';
    ctx.fillRect(0, 0, W, H);
    drawn = 0;
    for (d = 0; d <= maxDepth; d++) {
      rowNodes[d] = [];
      rowX[d] = [];
      rowW[d] = [];
    }
    for (a = parent[z]; a >= 0; a = parent[a])
      frame(a, 0, W, true);
    /* nothing of this value at all: an empty graph, not NaN widths */
    for (i = z, e = val[z] > 0 ? end[z] : z; i < e;) {
      w = val[i] * scale;
      if (w < MIN_WIDTH) {
        i = end[i];
        continue;
      }
      frame(i, (left[i] - x0) * scale, w, false);
      i++;
    }
    ctx.globalAlpha = 1;
  }

  var pending = false;
  function redraw() {
    if (pending)
      return;
    pending = true;
    requestAnimationFrame(function () {
      pending = false;
      draw();
    });
  }

  /* ---- zoom, search, flip ---------------------------------------------------- */

  function crumbs() {
    var nav = $('fg-crumbs');
    var chain = [];
    var a, k;

    nav.textContent = '';
    for (a = zoom; a >= 0; a = parent[a])
      chain.unshift(a);
    resetButton.disabled = zoom === 0;
    if (zoom === 0)
      return;
    nav.appendChild(document.createTextNode('Zoomed: '));
    k = chain.length > 9 ? chain.length - 8 : 0;
    if (k) {
      chain.splice(1, k - 1);
      chain[1] = -1;
    }
    chain.forEach(function (c, j) {
      var el;
      if (j)
        nav.appendChild(document.createTextNode(' \u203a '));
      if (c < 0) {
        nav.appendChild(document.createTextNode('\u2026'));
        return;
      }
      el = document.createElement(c === zoom ? 'b' : 'a');
      el.textContent = S[nameI[c]];
      if (c !== zoom)
        el.addEventListener('click', function () { zoomNode(c); });
      nav.appendChild(el);
    });
  }

  function zoomNode(i) {
    zoom = i;
    hover = -1;
    crumbs();
    draw();
  }

  function runSearch(q) {
    var re = null, m, sm, i, sum;

    searchBox.classList.remove('fg-bad');
    if (!q) {
      match = null;
      matchLabel.textContent = '';
      draw();
      return null;
    }
    m = /^\/(.*)\/([a-z]*)$/.exec(q);
    if (m) {
      try {
        re = new RegExp(m[1], m[2].replace(/[gy]/g, ''));
      } catch (err) {
        searchBox.classList.add('fg-bad');
        matchLabel.textContent = 'bad regexp';
        return null;
      }
    }
    sm = new Uint8Array(S.length);
    for (i = 0; i < S.length; i++)
      sm[i] = re ? re.test(S[i]) : S[i].indexOf(q) >= 0;
    match = new Uint8Array(n);
    for (i = 1; i < n; i++) /* never the root: "all" is not a frame */
      match[i] = sm[nameI[i]];
    draw();
    return matchShare();
  }

  /* The matched share of the view's value, said in the label. */
  function matchShare() {
    var sum = 0, i, share;
    if (!match)
      return null;
    /* A match inside a match is already counted by the outer one. */
    for (i = 0; i < n;) {
      if (match[i]) {
        sum += val[i];
        i = end[i];
      } else {
        i++;
      }
    }
    share = pct(sum, total);
    matchLabel.textContent = 'Matched: ' + share.toFixed(2) + '%';
    matchLabel.title = amount(sum) + ' of ' + amount(total);
    return share;
  }

  /* Switch what frames are as wide as; the zoom stays on the frame, or
   * the nearest caller that has some of the new value. */
  function setValue(v) {
    if (!OC || !VALUE_TITLES[v])
      return false;
    view = v;
    computeValues(v);
    colours = new Array(n);
    while (zoom && !(val[zoom] > 0))
      zoom = parent[zoom];
    hover = -1;
    tip.hidden = true;
    titles();
    legend();
    pressButtons();
    crumbs();
    matchShare();
    draw();
    return true;
  }

  function setIcicle(on) {
    icicle = !!on;
    flipButton.textContent = icicle ? 'Flame' : 'Icicle';
    hover = -1;
    draw();
    if (!icicle)
      scrollToRoot();
  }

  function scrollToRoot() {
    var r = canvas.getBoundingClientRect();
    if (r.bottom > window.innerHeight)
      window.scrollBy(0, r.bottom - window.innerHeight + status.offsetHeight + 12);
  }

  /* ---- mouse and keys -------------------------------------------------------- */

  function hit(clientX, clientY) {
    var r = canvas.getBoundingClientRect();
    var x = clientX - r.left, y = clientY - r.top;
    var row = Math.floor(y / ROW);
    var d = icicle ? row : maxDepth - row;
    var xs, ws, k;

    if (y < 0 || y >= H || d < 0 || d > maxDepth)
      return -1;
    xs = rowX[d];
    ws = rowW[d];
    /* Each row is drawn left to right: binary search the last start <= x. */
    var lo = 0, hi = xs.length - 1, best = -1;
    while (lo <= hi) {
      k = (lo + hi) >> 1;
      if (xs[k] <= x) {
        best = k;
        lo = k + 1;
      } else {
        hi = k - 1;
      }
    }
    /* Ancestors of the zoom root span the row: they come first. */
    if (best >= 0 && x < xs[best] + ws[best])
      return rowNodes[d][best];
    return -1;
  }

  function describe(i) {
    var lines = [];
    var f = S[fileI[i]];
    var kind = TYPE_NAMES[type[i]] || 'frame';
    lines.push(kind + (f ? ' \u00b7 ' + f : ''));
    lines.push(amount(val[i]) + ', ' + pct(val[i], total).toFixed(2) + '% of all' +
               (zoom && zoom !== i ? ', ' + pct(val[i], val[zoom]).toFixed(2) + '% of the zoomed frame' : ''));
    if (OC)
      lines.push((view === 'wall' && offFrame(i) ? 'mostly off the CPU: ' : '') + 'on the CPU ' +
                 sampleCount(samples[i]) + ' (' + ms(samples[i] * OC.sampleNs) + '), off the CPU ' +
                 ms(offNs[i]));
    if (diff) {
      var d = delta(i);
      lines.push('before ' + pct(before[i], totalBefore).toFixed(2) + '%, after ' +
                 pct(val[i], total).toFixed(2) + '%: ' + (d >= 0 ? '+' : '') + d.toFixed(2) + ' points');
    }
    return lines;
  }

  function showTip(i, cx, cy) {
    var name = document.createElement('div');
    var rest = document.createElement('div');
    var lines = describe(i);
    var tw, th, x, y;

    name.className = 'fg-name';
    name.textContent = S[nameI[i]];
    rest.textContent = lines.join('\n');
    tip.textContent = '';
    tip.appendChild(name);
    tip.appendChild(rest);
    tip.hidden = false;
    tw = tip.offsetWidth;
    th = tip.offsetHeight;
    x = cx + 14;
    y = cy + 16;
    if (x + tw > window.innerWidth - 4)
      x = Math.max(4, cx - tw - 10);
    if (y + th > window.innerHeight - 4)
      y = Math.max(4, cy - th - 10);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
    status.textContent = S[nameI[i]] + ' \u2014 ' + lines.join('; ');
  }

  function hideTip() {
    tip.hidden = true;
    status.textContent = defaultStatus;
    if (hover >= 0) {
      hover = -1;
      redraw();
    }
  }

  canvas.addEventListener('mousemove', function (ev) {
    var i = hit(ev.clientX, ev.clientY);
    if (i < 0) {
      hideTip();
      return;
    }
    showTip(i, ev.clientX, ev.clientY);
    if (i !== hover) {
      hover = i;
      redraw();
    }
  });
  canvas.addEventListener('mouseleave', hideTip);
  canvas.addEventListener('click', function (ev) {
    var i = hit(ev.clientX, ev.clientY);
    if (i >= 0 && i !== zoom)
      zoomNode(i);
  });
  resetButton.addEventListener('click', function () { zoomNode(0); });
  flipButton.addEventListener('click', function () { setIcicle(!icicle); });

  var searchTimer = 0;
  searchBox.addEventListener('input', function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { runSearch(searchBox.value); }, 120);
  });
  searchBox.addEventListener('keydown', function (ev) {
    if (ev.key === 'Enter') {
      clearTimeout(searchTimer);
      runSearch(searchBox.value);
    } else if (ev.key === 'Escape') {
      searchBox.value = '';
      runSearch('');
      searchBox.blur();
    }
  });
  document.addEventListener('keydown', function (ev) {
    if (ev.target === searchBox || ev.ctrlKey || ev.metaKey || ev.altKey)
      return;
    if (ev.key === '/') {
      ev.preventDefault();
      searchBox.focus();
    } else if (ev.key === 'Escape') {
      zoomNode(0);
    } else if (ev.key === 'i') {
      setIcicle(!icicle);
    } else if (ev.key === 'v' && OC) {
      setValue(view === 'cpu' ? 'off-cpu' : view === 'off-cpu' ? 'wall' : 'cpu');
    } else if (ev.key === 'u' || ev.key === 'Backspace') {
      if (zoom)
        zoomNode(parent[zoom]);
    }
  });

  var resizeTimer = 0;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () {
      layout();
      draw();
    }, 60);
  });

  /* ---- test hook ------------------------------------------------------------- */

  function widest(name, onlyDrawn) {
    var best = -1, bestW = -1, d, k, i;
    if (onlyDrawn) {
      for (d = 0; d <= maxDepth; d++)
        for (k = 0; k < rowNodes[d].length; k++)
          if (S[nameI[rowNodes[d][k]]] === name && rowW[d][k] > bestW) {
            best = rowNodes[d][k];
            bestW = rowW[d][k];
          }
      return best;
    }
    for (i = 0; i < n; i++)
      if (S[nameI[i]] === name && val[i] > bestW) {
        best = i;
        bestW = val[i];
      }
    return best;
  }

  var hook = {
    version: 1,
    parsedMs: parsedMs,
    firstDrawMs: 0,
    firstPaintMs: 0,
    minFrameWidth: MIN_WIDTH,
    rowHeight: ROW,
    nodeCount: function () { return n; },
    total: function () { return total; },
    canvasWidth: function () { return W; },
    framesDrawn: function () { return drawn; },
    zoomRoot: function () { return S[nameI[zoom]]; },
    zoomTo: function (name) {
      var i = widest(name, false);
      if (i >= 0)
        zoomNode(i);
      return i >= 0;
    },
    reset: function () { zoomNode(0); },
    search: function (text) {
      searchBox.value = text || '';
      return runSearch(searchBox.value);
    },
    icicle: function () { return icicle; },
    setIcicle: setIcicle,
    /* The values the page switches between (none: it has one) and the one shown. */
    values: function () { return OC ? ['cpu', 'off-cpu', 'wall'] : []; },
    value: function () { return view; },
    setValue: setValue,
    /* Where the widest drawn frame of that name is, in viewport pixels, after
     * scrolling it into view: for real mouse events at it. */
    frameRect: function (name) {
      var i = widest(name, true), d, k, r, y, top, bottom;
      if (i < 0)
        return null;
      d = depth[i];
      k = rowNodes[d].indexOf(i);
      r = canvas.getBoundingClientRect();
      y = r.top + rowY(d);
      top = $('fg-header').getBoundingClientRect().bottom;
      bottom = window.innerHeight - status.offsetHeight;
      if (y < top + 2 || y + ROW > bottom - 2) {
        window.scrollBy(0, y - (top + bottom) / 2);
        r = canvas.getBoundingClientRect();
      }
      return { x: r.left + rowX[d][k], y: r.top + rowY(d), width: rowW[d][k], height: ROW - 1 };
    },
    frameInfo: function (name) {
      var i = widest(name, false);
      var info;
      if (i < 0)
        return null;
      info = { name: name, file: S[fileI[i]], type: TYPE_NAMES[type[i]], samples: samples[i],
               value: val[i], percent: pct(val[i], total), colour: colour(i) };
      if (OC) {
        info.offCpuNs = offNs[i];
        info.offCpuColours = offFrame(i);
      }
      if (diff) {
        info.before = pct(before[i], totalBefore);
        info.after = info.percent;
        info.delta = delta(i);
        info.change = changeOf(info.delta);
      }
      return info;
    },
    tooltip: function () { return tip.hidden ? '' : tip.innerText; }
  };
  window.dcprofFlame = hook;

  titles();
  legend();
  pressButtons();
  layout();
  crumbs();
  draw();
  hook.firstDrawMs = performance.now();
  requestAnimationFrame(function () {
    setTimeout(function () { hook.firstPaintMs = performance.now(); }, 0);
  });
  scrollToRoot();
})();
