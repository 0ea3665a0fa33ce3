// A step on every rank, aligned on the job's clock: one lane per rank spanning its step (its
// timestamps less its clock offset, CommSummary.clock_offset_ns), with the collectives the
// analysis lists (the most waited on) drawn on it, their wait for the last rank dark and their
// transfer light. A rank that arrives late shows as the lane whose collectives start last and
// wait least. SVG: a few lanes of a few boxes each.
import {svg, h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';
import {showTooltip, hideTooltip, keyValues} from './tooltip.js';
import {hasFinding} from './breakdown.js';
import {CAUSE_COLORS} from './cause_colors.js';

const LANE_H = 22;
const M = {top: 8, right: 12, bottom: 26, left: 92};

// CommSummary.rank: proto3 JSON leaves rank 0 out (num() reads it as 0); -1 is unknown.
const rankOfReport = (r, fallback) => (num(r.comm.rank) >= 0 ? num(r.comm.rank) : fallback);

// reports: this step's report on each process (those with comm data are drawn). onSelect(report)
// on a click on a lane.
export function rankLanes(reports, {width, currentProcess, onSelect} = {}) {
  const lanes = reports.filter((r) => r.comm).map((r, i) => {
    const offset = num(r.comm.clock_offset_ns);
    return {r, rank: rankOfReport(r, i), offset, start: num(r.step.start_ns) - offset, end: num(r.step.end_ns) - offset,
      straggler: hasFinding(r, 'straggler')};
  }).sort((a, b) => a.rank - b.rank);
  if (lanes.length < 2) return null;
  // The straggler: its own finding says so, or most of the other ranks waited for it.
  const votes = new Map();
  for (const l of lanes) {
    const w = num(l.r.comm.waited_for_rank);
    if (w >= 0 && w !== l.rank) votes.set(w, (votes.get(w) || 0) + 1);
  }
  for (const l of lanes) l.straggler ||= (votes.get(l.rank) || 0) * 2 >= lanes.length - 1 && votes.has(l.rank);
  const t0 = Math.min(...lanes.map((l) => l.start));
  const t1 = Math.max(...lanes.map((l) => l.end));
  const W = Math.max(320, width || 900);
  const plotW = W - M.left - M.right;
  const H = M.top + lanes.length * LANE_H + M.bottom;
  const x = (t) => M.left + ((t - t0) / Math.max(1, t1 - t0)) * plotW;
  const root = svg('svg', {class: 'rank-lanes', width: W, height: H, viewBox: `0 0 ${W} ${H}`,
    role: 'img', 'aria-label': 'this step on every rank, aligned on the job clock'});

  const tickNs = fmt.niceStep((t1 - t0) / 1e6, 6) * 1e6;
  for (let t = 0; t <= t1 - t0; t += tickNs) {
    root.append(svg('line', {class: 'grid', x1: x(t0 + t), x2: x(t0 + t), y1: M.top, y2: H - M.bottom}),
      svg('text', {class: 'axis', x: x(t0 + t), y: H - M.bottom + 14, 'text-anchor': 'middle'}, (t / 1e6).toFixed(tickNs < 1e6 ? 1 : 0)));
  }
  root.append(svg('text', {class: 'axis', x: M.left + plotW / 2, y: H - 2, 'text-anchor': 'middle'}, 'ms on the job clock'));

  lanes.forEach((l, i) => {
    const y = M.top + i * LANE_H;
    const g = svg('g', {class: 'rank-lane' + (l.straggler ? ' straggler' : '') + (l.r.step.process_id === currentProcess ? ' current' : ''),
      dataset: {rank: l.rank, process: l.r.step.process_id, straggler: l.straggler ? '1' : '0'}, tabindex: 0, role: 'button',
      'aria-label': `rank ${l.rank}` + (l.straggler ? ', straggler' : '')});
    g.append(svg('text', {class: 'lane-label', x: M.left - 8, y: y + LANE_H / 2 + 4, 'text-anchor': 'end'},
      (l.straggler ? '★ ' : '') + 'rank ' + l.rank));
    g.append(svg('rect', {class: 'lane-step', x: x(l.start), width: Math.max(1, x(l.end) - x(l.start)), y: y + 3, height: LANE_H - 6}));
    for (const c of l.r.comm.collectives || []) {
      const start = num(c.start_ns) - l.offset, wait = num(c.wait_ns), dur = num(c.duration_ns);
      const cx = x(start), wx = x(start + wait), ex = x(start + dur);
      const box = svg('g', {class: 'collective', dataset: {op: c.op || 'collective', waitNs: wait}});
      if (wait > 0) box.append(svg('rect', {x: cx, width: Math.max(1, wx - cx), y: y + 5, height: LANE_H - 10, fill: CAUSE_COLORS.comm_wait}));
      box.append(svg('rect', {x: wx, width: Math.max(1, ex - wx), y: y + 5, height: LANE_H - 10, fill: CAUSE_COLORS.comm_transfer}));
      box.addEventListener('mousemove', (e) => {
        e.stopPropagation();
        showTooltip(e.clientX, e.clientY, h('strong', {}, (c.op || 'collective') + ' #' + num(c.index)), ' ',
          h('span', {class: 'muted'}, 'rank ' + l.rank),
          keyValues([['duration', fmt.duration(dur)], ['waiting', fmt.duration(wait)], ['transfer', fmt.duration(num(c.transfer_ns))],
            ['waited for', num(c.last_rank) >= 0 ? 'rank ' + num(c.last_rank) : ''], ['group', c.group],
            ['size', num(c.bytes) ? fmt.bytes(num(c.bytes)) : ''],
            ['bus bandwidth', c.bus_bandwidth_gbps ? c.bus_bandwidth_gbps.toFixed(1) + ' GB/s' : ''],
            ['kernel', c.kernel ? fmt.shortKernel(c.kernel) : '']]));
      });
      g.append(box);
    }
    g.addEventListener('mousemove', (e) => showTooltip(e.clientX, e.clientY, h('strong', {}, 'rank ' + l.rank),
      keyValues([['step', fmt.ms(l.end - l.start)], ['waiting in collectives', fmt.ms(num(l.r.comm.wait_ns))],
        ['transfer', fmt.ms(num(l.r.comm.transfer_ns))], ['clock offset', fmt.duration(l.offset)],
        ['straggler', l.straggler ? 'yes: the others waited for this rank' : '']])));
    g.addEventListener('mouseleave', hideTooltip);
    if (onSelect) {
      g.addEventListener('click', () => { hideTooltip(); onSelect(l.r); });
      g.addEventListener('keydown', (e) => { if (e.key === 'Enter') onSelect(l.r); });
    }
    root.append(g);
  });
  return root;
}
