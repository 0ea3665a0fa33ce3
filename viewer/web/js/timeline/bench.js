// Timeline rendering benchmark on a synthetic step of N events (a launch-storm-like step: host
// launches, kernels spread over 4 streams, nested NVTX ranges). The browser test imports it to
// check that a 100k-event step stays smooth; also usable by hand from the devtools console:
//   (await import('/static/js/timeline/bench.js')).run(100000)
import {h} from '../dom.js';
import {Timeline} from './timeline.js';

export function syntheticTimeline(n) {
  const strings = ['', 'cudaLaunchKernel', 'runtime API', 'ProfilerStep#0', 'NVTX range, domain default', 'grid (1,1,1) block (128,1,1)'];
  const kernelNames = [];
  for (let k = 0; k < 40; ++k) kernelNames.push(strings.push('void synthetic_kernel_' + k + '<float>(float*, int)') - 1);
  const opNames = [];
  for (let k = 0; k < 20; ++k) opNames.push(strings.push('aten::op_' + k) - 1);
  const ev = {lane: [], kind: [], start: [], end: [], name: [], info: [], corr: [], depth: []};
  const add = (lane, kind, s, e, name, info, corr, depth) => {
    ev.lane.push(lane); ev.kind.push(kind); ev.start.push(s); ev.end.push(e);
    ev.name.push(name); ev.info.push(info); ev.corr.push(corr); ev.depth.push(depth);
  };
  const launches = Math.round((n - 1) / 2.025);  // a launch, its kernel, and an NVTX range per 40
  let host = 2000;
  const streamFree = [0, 0, 0, 0];
  for (let i = 0; i < launches; ++i) {
    const launchNs = 3000 + (i % 7) * 300;
    add(0, 4, host, host + launchNs, 1, 2, i + 1, 0);
    const st = i % 4;
    const ks = Math.max(host + launchNs + 1500, streamFree[st]);
    const kd = 2000 + ((i * 7919) % 13) * 900;
    add(1 + st, 0, ks, ks + kd, kernelNames[i % kernelNames.length], 5, i + 1, 0);
    streamFree[st] = ks + kd;
    if (i % 40 === 0) add(0, 5, host - 500, host + 40 * (launchNs + 1000), opNames[(i / 40) % 20], 4, 0, 1);
    host += launchNs + 1000;
  }
  const wall = Math.max(host, ...streamFree) + 1000;
  add(0, 5, 0, wall, 3, 4, 0, 0);
  return {
    origin_ns: '0', wall_ns: wall, strings, kinds: ['kernel', 'memcpy', 'memset', 'sync', 'api', 'nvtx', 'mark', 'overhead', 'graph'],
    lanes: [{kind: 'thread', thread_id: 1, label: 'thread 1'},
      ...[0, 1, 2, 3].map((s) => ({kind: 'stream', device: 0, stream: 7 + s, label: 'GPU 0 stream ' + (7 + s)}))],
    events: ev, idle: [], idle_causes: ['sync_blocked', 'launch_bound', 'input', 'host_other', 'cuda_call'], blocking: [], truncated: false,
  };
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

// Renders the whole step, then 24 zoom steps into its middle and 24 pans, each as one frame
// (drawing plus a pixel read-back, so rasterisation is counted, not just the JS).
export async function run(n = 100000, width = 1400) {
  const json = syntheticTimeline(n);
  const pageStats = window.__timelineStats;  // the page's own timeline keeps its figures
  const t0 = performance.now();
  const tl = new Timeline(json);
  const buildMs = performance.now() - t0;
  const host = h('div', {style: {width: width + 'px', position: 'absolute', left: '0', top: '0'}}, tl.el);
  document.body.append(host);
  tl.resize();
  const frame = () => {
    const s = performance.now();
    tl.render();
    tl.ctx.getImageData(0, 0, 1, 1);
    return performance.now() - s;
  };
  const fit = [];
  for (let i = 0; i < 5; ++i) fit.push(frame());
  const fitStats = {...window.__timelineStats};
  const zoom = [];
  for (let i = 0; i < 24; ++i) { tl.zoomBy(0.7); zoom.push(frame()); }
  const pan = [];
  for (let i = 0; i < 24; ++i) { tl.panBy((tl.view.end - tl.view.start) * 0.3); pan.push(frame()); }
  tl.destroy();
  host.remove();
  window.__timelineStats = pageStats;
  const all = [...fit, ...zoom, ...pan];
  return {
    events: tl.m.n, buildMs, fitMedianMs: median(fit), zoomMedianMs: median(zoom), panMedianMs: median(pan),
    maxFrameMs: Math.max(...all), medianFrameMs: median(all), frames: all.length,
    visibleAtFit: fitStats.visibleEvents, mergedColumnsAtFit: fitStats.mergedColumns, rectsAtFit: fitStats.rects,
  };
}
