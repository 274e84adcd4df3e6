#!/usr/bin/env node
// SPDX-License-Identifier: MIT
/*
 * Drives Debian's chromium (headless, through playwright-core) over a page
 * written by `dcprof flamegraph` and prints what it saw as one JSON object;
 * the shell tests judge the numbers.
 *
 *   node flame.js check PAGE.html --click NAME --search TEXT --screenshot PNG
 *                       [--pixels NAME,NAME,...]
 *   node flame.js diff PAGE.html --frame NAME... [--screenshot PNG]
 *   node flame.js values PAGE.html --frame NAME... [--screenshot PREFIX]
 *   node flame.js bench PAGE.html [--runs N]
 *
 * Interactions go through real input events (mouse clicks on the canvas at
 * the frame's coordinates, clicks on the buttons, typing in the search box);
 * the page's test hook, window.dcprofFlame, only reports state and where a
 * frame is drawn.
 */
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function parseArgs(argv) {
  const a = { mode: argv[0], page: argv[1], frames: [], runs: 5 };
  for (let i = 2; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[++i];
    if (k === '--click') a.click = v;
    else if (k === '--search') a.search = v;
    else if (k === '--screenshot') a.screenshot = v;
    else if (k === '--frame') a.frames.push(v);
    else if (k === '--runs') a.runs = Number(v);
    else if (k === '--pixels') a.pixels = v.split(',');
    else throw new Error(`unknown argument '${k}'`);
  }
  if (!a.mode || !a.page)
    throw new Error('usage: flame.js check|diff|values|bench PAGE.html [options]');
  return a;
}

/* The tree as the page has it, read from the file itself. */
function pageData(file) {
  const html = fs.readFileSync(file, 'utf8');
  const m = /<script type="application\/json" id="fg-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m)
    throw new Error(`no flame graph data in '${file}'`);
  return JSON.parse(m[1]);
}

/* A node's value in a view, from the file: samples, or with off-CPU time
 * its ns (off-cpu) or the samples times the period plus those (wall). */
function valueOf(data, view) {
  const K = data.stride, v = data.nodes;
  if (view === 'off-cpu')
    return (i) => v[i * K + 5];
  if (view === 'wall')
    return (i) => v[i * K + 4] * data.offCpu.sampleNs + v[i * K + 5];
  return (i) => v[i * K + 4];
}

/* Frames wide enough to draw at this width, by the page's rule, counted independently. */
function expectedFrames(data, width, minWidth, view) {
  const K = data.stride;
  const n = data.nodes.length / K;
  const value = valueOf(data, view || 'cpu');
  const scale = width / value(0);
  let count = 0;
  for (let i = 0; i < n; i++)
    if (value(i) * scale >= minWidth)
      count++;
  return count;
}

/* Frames drawn once zoomed into the widest node named `name`, by the
 * page's rule: its ancestors, full width, and the nodes of its subtree
 * wide enough at the zoomed scale. */
function expectedZoomed(data, width, minWidth, name) {
  const K = data.stride;
  const n = data.nodes.length / K;
  const v = data.nodes;
  let z = -1;
  for (let i = 0; i < n; i++)
    if (data.strings[v[i * K]] === name && (z < 0 || v[i * K + 4] > v[z * K + 4]))
      z = i;
  if (z < 0)
    return -1;
  const scale = width / v[z * K + 4];
  let count = v[z * K + 3]; /* ancestors: one per level above it */
  for (let i = z; i < n && (i === z || v[i * K + 3] > v[z * K + 3]); i++)
    if (v[i * K + 4] * scale >= minWidth)
      count++;
  return count;
}

async function launch() {
  const { chromium } = require('playwright-core');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'dcprof-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
           '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
  const close = async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  };
  return { context, close };
}

async function openPage(context, file, requests) {
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto('file://' + path.resolve(file));
  await page.waitForFunction(() => window.dcprofFlame && window.dcprofFlame.firstPaintMs > 0,
                             null, { timeout: 60000 });
  return { page, errors };
}

async function centre(page, name) {
  const rect = () => page.evaluate((nm) => window.dcprofFlame.frameRect(nm), name);
  let r = await rect();
  if (!r)
    throw new Error(`frame '${name}' is not drawn`);
  /* A frame outside the window (a deep stack draws below its bottom) is
   * scrolled into it first: the mouse cannot point outside the viewport,
   * and a hover there never shows a tooltip. */
  const h = await page.evaluate(() => window.innerHeight);
  if (r.y < 0 || r.y + r.height > h) {
    await page.evaluate((dy) => window.scrollBy(0, dy), r.y + r.height / 2 - h / 2);
    r = await rect();
  }
  return { x: r.x + r.width / 2, y: r.y + r.height / 2, rect: r };
}

/* A frame as drawn, from the canvas's own pixels: the hook says only which
 * row a frame is on and where its middle is; the width is the run of its
 * fill colour along that row, measured one pixel below the frame's top edge
 * (above the label's glyphs). */
async function pixels(page, name) {
  const c = await centre(page, name);
  const p = await page.evaluate(({ x, y }) => {
    const cv = document.getElementById('fg-canvas');
    const r = cv.getBoundingClientRect();
    const dpr = cv.width / r.width;
    const row = cv.getContext('2d').getImageData(
      0, Math.floor((y - r.top + 1) * dpr), cv.width, 1).data;
    const at = (i) => [row[4 * i], row[4 * i + 1], row[4 * i + 2]];
    const mid = Math.floor((x - r.left) * dpr);
    const fill = at(mid);
    const same = (i) => at(i).every((v, k) => v === fill[k]);
    let lo = mid, hi = mid;
    while (lo > 0 && same(lo - 1)) lo--;
    while (hi < cv.width - 1 && same(hi + 1)) hi++;
    const bg = at(cv.width - 1);
    return { fill, background: bg, width: (hi - lo + 1) / dpr,
             canvasWidth: cv.width / dpr };
  }, { x: c.x, y: c.rect.y });
  p.hookWidth = c.rect.width;
  return p;
}

async function check(a) {
  const out = { requests: [] };
  const data = pageData(a.page);
  const { context, close } = await launch();
  try {
    const { page, errors } = await openPage(context, a.page, out.requests);
    const hook = (f, arg) => page.evaluate(f, arg);

    out.nodes = await hook(() => window.dcprofFlame.nodeCount());
    out.dataNodes = data.nodes.length / data.stride;
    out.framesDrawn = await hook(() => window.dcprofFlame.framesDrawn());
    out.canvasWidth = await hook(() => window.dcprofFlame.canvasWidth());
    out.expectedFrames = expectedFrames(data, out.canvasWidth,
                                        await hook(() => window.dcprofFlame.minFrameWidth));
    out.firstPaintMs = await hook(() => window.dcprofFlame.firstPaintMs);

    /* The frames as drawn, from the canvas's own pixels: the hook says only
     * which row a frame is on and where its middle is; the width is the run
     * of its fill colour along that row, measured one pixel below the
     * frame's top edge (above the label's glyphs). */
    if (a.pixels) {
      out.pixels = {};
      for (const name of a.pixels)
        out.pixels[name] = await pixels(page, name);
    }

    if (a.click) {
      /* Hover first: the tooltip must name the frame and its samples. */
      let c = await centre(page, a.click);
      await page.mouse.move(c.x, c.y);
      await page.waitForFunction(() => window.dcprofFlame.tooltip() !== '');
      out.tooltip = await hook(() => window.dcprofFlame.tooltip());
      await page.mouse.click(c.x, c.y);
      out.zoomRoot = await hook(() => window.dcprofFlame.zoomRoot());
      c = await centre(page, a.click);
      out.zoomedWidth = c.rect.width;
      out.framesDrawnZoomed = await hook(() => window.dcprofFlame.framesDrawn());
      out.expectedZoomed = expectedZoomed(data, out.canvasWidth,
                                          await hook(() => window.dcprofFlame.minFrameWidth),
                                          out.zoomRoot);
      /* Back out with the reset button, a real click too. */
      await page.click('#fg-reset');
      out.zoomRootAfterReset = await hook(() => window.dcprofFlame.zoomRoot());
    }
    if (a.search) {
      await page.fill('#fg-search', a.search);
      await page.press('#fg-search', 'Enter');
      out.searchLabel = await page.textContent('#fg-match');
      out.searchPercent = await hook((t) => window.dcprofFlame.search(t), a.search);
    }
    await page.click('#fg-flip');
    out.icicle = await hook(() => window.dcprofFlame.icicle());
    if (a.click) {
      const c = await centre(page, a.click);
      await page.mouse.move(c.x, c.y);
    }
    if (a.screenshot) {
      fs.mkdirSync(path.dirname(a.screenshot), { recursive: true });
      await page.screenshot({ path: a.screenshot, fullPage: true });
    }
    out.errors = errors;
  } finally {
    await close();
  }
  return out;
}

async function diff(a) {
  const out = { requests: [], frames: {} };
  const data = pageData(a.page);
  const { context, close } = await launch();
  try {
    const { page, errors } = await openPage(context, a.page, out.requests);
    out.onlyBefore = data.onlyBefore;
    out.framesDrawn = await page.evaluate(() => window.dcprofFlame.framesDrawn());
    for (const name of a.frames) {
      out.frames[name] = await page.evaluate((nm) => window.dcprofFlame.frameInfo(nm), name);
      /* The tooltip, through a real hover, carries the numbers too. */
      const c = await centre(page, name);
      await page.mouse.move(c.x, c.y);
      await page.waitForFunction(() => window.dcprofFlame.tooltip() !== '');
      out.frames[name].tooltip = await page.evaluate(() => window.dcprofFlame.tooltip());
    }
    out.notes = await page.textContent('#fg-notes');
    if (a.screenshot) {
      fs.mkdirSync(path.dirname(a.screenshot), { recursive: true });
      await page.screenshot({ path: a.screenshot, fullPage: true });
    }
    out.errors = errors;
  } finally {
    await close();
  }
  return out;
}

/* A page with off-CPU time: the value switch, clicked to each value in
 * turn (off-CPU, wall, CPU), and per value the header, the frames drawn
 * and each named frame as the page has it, as drawn and as its tooltip
 * says. A page without the switch reports it and nothing else. */
async function values(a) {
  const out = { requests: [], views: {} };
  const data = pageData(a.page);
  const { context, close } = await launch();
  try {
    const { page, errors } = await openPage(context, a.page, out.requests);
    const hook = (f, arg) => page.evaluate(f, arg);
    out.switchShown = await page.isVisible('#fg-values');
    out.values = await hook(() => window.dcprofFlame.values());
    out.initial = await hook(() => window.dcprofFlame.value());
    out.initialTitle = await page.textContent('#fg-title');
    out.legend = await page.textContent('#fg-legend');
    out.errors = errors;
    if (!out.switchShown || !out.values.length)
      return out;
    const minWidth = await hook(() => window.dcprofFlame.minFrameWidth);
    for (const view of ['off-cpu', 'wall', 'cpu']) {
      await page.click(`#fg-values button[data-value="${view}"]`);
      const v = { frames: {} };
      v.value = await hook(() => window.dcprofFlame.value());
      v.pressed = await page.getAttribute('#fg-values button[aria-pressed="true"]', 'data-value');
      v.title = await page.textContent('#fg-title');
      v.total = await page.textContent('#fg-total');
      v.legend = await page.textContent('#fg-legend');
      v.framesDrawn = await hook(() => window.dcprofFlame.framesDrawn());
      v.canvasWidth = await hook(() => window.dcprofFlame.canvasWidth());
      v.expectedFrames = expectedFrames(data, v.canvasWidth, minWidth, view);
      for (const name of a.frames) {
        const info = await hook((nm) => window.dcprofFlame.frameInfo(nm), name);
        const drawn = info && await hook((nm) => window.dcprofFlame.frameRect(nm), name);
        v.frames[name] = { info, drawn: !!drawn };
        if (!drawn)
          continue;
        v.frames[name].pixels = await pixels(page, name);
        const c = await centre(page, name);
        /* a frame a pixel or two wide (f1_burn's preemptions in the
         * off-CPU view) is drawn but not worth aiming at: no tooltip */
        if (c.rect.width < 3) {
          v.frames[name].tooltip = null;
          continue;
        }
        await page.mouse.move(c.x, c.y);
        await page.waitForFunction(() => window.dcprofFlame.tooltip() !== '');
        v.frames[name].tooltip = await hook(() => window.dcprofFlame.tooltip());
        await page.mouse.move(1, 1);
      }
      if (a.screenshot)
        await page.screenshot({ path: `${a.screenshot}-${view}.png`, fullPage: true });
      out.views[view] = v;
    }
  } finally {
    await close();
  }
  return out;
}

/* Load-to-first-paint over fresh loads: performance.now() is measured from navigation start. */
async function bench(a) {
  const out = { runs: [] };
  const { context, close } = await launch();
  try {
    for (let i = 0; i < a.runs; i++) {
      const page = await context.newPage();
      await page.goto('file://' + path.resolve(a.page));
      await page.waitForFunction(() => window.dcprofFlame && window.dcprofFlame.firstPaintMs > 0,
                                 null, { timeout: 120000 });
      out.runs.push(await page.evaluate(() => ({
        parsedMs: window.dcprofFlame.parsedMs,
        firstDrawMs: window.dcprofFlame.firstDrawMs,
        firstPaintMs: window.dcprofFlame.firstPaintMs,
        framesDrawn: window.dcprofFlame.framesDrawn(),
        nodes: window.dcprofFlame.nodeCount(),
      })));
      /* A redraw after a search: what interaction costs on this tree. */
      out.runs[i].searchMs = await page.evaluate(() => {
        const t = performance.now();
        window.dcprofFlame.search('f3');
        return performance.now() - t;
      });
      await page.close();
    }
  } finally {
    await close();
  }
  return out;
}

(async () => {
  let a;
  try {
    a = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(String(e.message || e));
    process.exit(2);
  }
  const run = { check, diff, values, bench }[a.mode];
  if (!run) {
    console.error(`unknown mode '${a.mode}'`);
    process.exit(2);
  }
  try {
    console.log(JSON.stringify(await run(a), null, 1));
  } catch (e) {
    console.error(`flame.js: ${e.stack || e}`);
    process.exit(1);
  }
})();
