// Step-time chart: one stacked bar per step (wall time split into the breakdown categories),
// warm-up and outlier steps hatched and labelled, the steady-state median as a dashed line.
// SVG, since a job has at most thousands of steps and each bar then stays a DOM node that tests
// and screen readers can find.
import {svg, h} from './dom.js';
import {CATEGORIES, isTimeWindow, stepKind, stepKindLabel, stepNoun, stepParts} from './breakdown.js';
import {num} from './api.js';
import * as fmt from './format.js';
import {showTooltip, hideTooltip, keyValues} from './tooltip.js';

const HEIGHT = 260;
const M = {top: 18, right: 12, bottom: 34, left: 56};

// reports: one process's step reports in step order. onSelect(report) on click. medianNs: the
// process's steady median step (RankSummary.median_wall_ns), drawn when it has steady steps.
export function stepChart(reports, {onSelect, width, highlightStep, medianNs = 0} = {}) {
  const W = Math.max(320, width || 900);
  const plotW = W - M.left - M.right, plotH = HEIGHT - M.top - M.bottom;
  const walls = reports.map((r) => num(r.breakdown && r.breakdown.wall_ns));
  const maxWall = Math.max(1, ...walls);
  const stepMs = fmt.niceStep(maxWall / 1e6, 5);
  const top = Math.ceil(maxWall / 1e6 / stepMs) * stepMs * 1e6;
  const y = (ns) => M.top + plotH - (ns / top) * plotH;
  const slot = plotW / Math.max(1, reports.length);
  const barW = Math.max(1, Math.min(48, slot * 0.78));

  const root = svg('svg', {class: 'step-chart', width: W, height: HEIGHT, viewBox: `0 0 ${W} ${HEIGHT}`,
    role: 'img', 'aria-label': 'wall time per step, stacked by category'});
  root.append(svg('defs', {}, svg('pattern', {id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse',
    patternTransform: 'rotate(45)'}, svg('rect', {width: 2.5, height: 6, fill: 'rgba(255,255,255,0.55)'}))));

  for (let v = 0; v <= top + 1; v += stepMs * 1e6) {
    root.append(svg('line', {class: 'grid', x1: M.left, x2: W - M.right, y1: y(v), y2: y(v)}),
      svg('text', {class: 'axis', x: M.left - 6, y: y(v) + 4, 'text-anchor': 'end'}, (v / 1e6).toFixed(stepMs < 1 ? 1 : 0)));
  }
  root.append(svg('text', {class: 'axis', x: 12, y: M.top + plotH / 2, transform: `rotate(-90 12 ${M.top + plotH / 2})`,
    'text-anchor': 'middle'}, 'ms per step'));

  const labelEvery = Math.ceil(28 / slot);
  reports.forEach((r, i) => {
    const x = M.left + i * slot + (slot - barW) / 2;
    const kind = stepKind(r);
    const parts = stepParts(r);
    const number = num(r.step.number);
    const insufficient = Boolean(r.data_quality && r.data_quality.insufficient);
    const g = svg('g', {class: 'step-bar ' + kind + (number === highlightStep ? ' selected' : ''),
      dataset: {step: number, kind, wallNs: walls[i], insufficient: insufficient ? 1 : 0}, tabindex: 0,
      role: 'button', 'aria-label': `${stepNoun(r)} ${number}: ${fmt.ms(walls[i])}, ${stepKindLabel(r)}`});
    let acc = 0;
    for (const c of CATEGORIES) {
      const v = parts[c.cause] || 0;
      if (v <= 0) continue;
      g.append(svg('rect', {x, width: barW, y: y(acc + v), height: Math.max(0, y(acc) - y(acc + v)), fill: c.color}));
      acc += v;
    }
    if (kind !== 'steady' && kind !== 'window' && kind !== 'insufficient') {  // a window is no step, not an unsteady one
      g.append(svg('rect', {x, width: barW, y: y(acc), height: y(0) - y(acc), fill: 'url(#hatch)'}));
    }
    // Warm-up, outlier, and a recording that cannot carry a verdict ("?", DataQuality).
    const marks = (kind === 'warmup' ? 'W' : kind === 'outlier' ? 'O' : kind === 'unsteady' ? '·' : '') +
      (insufficient ? '?' : '');
    if (marks) {
      g.append(svg('text', {class: 'marker' + (insufficient ? ' insufficient' : ''), x: x + barW / 2,
        y: y(acc) - 4, 'text-anchor': 'middle'}, marks));
    }
    // A full-height hit area: short bars must be as easy to point at as tall ones.
    g.append(svg('rect', {class: 'hit', x: M.left + i * slot, width: slot, y: M.top, height: plotH}));
    const tip = (e) => showTooltip(e.clientX, e.clientY, h('strong', {}, `${stepNoun(r)} ${number}`),
      ' ', h('span', {class: 'muted'}, stepKindLabel(r)),
      keyValues([['wall', fmt.ms(walls[i])],
        ...CATEGORIES.filter((c) => parts[c.cause] > 0).map((c) => [c.label, fmt.ms(parts[c.cause])]),
        ['bottleneck', r.primary_bottleneck || 'none'],
        ...(insufficient ? [['data', 'insufficient: ' + (r.data_quality.reasons || []).join('; ')]] : [])]));
    g.addEventListener('mousemove', tip);
    g.addEventListener('mouseleave', hideTooltip);
    if (onSelect) {
      g.addEventListener('click', () => { hideTooltip(); onSelect(r); });
      g.addEventListener('keydown', (e) => { if (e.key === 'Enter') onSelect(r); });
    }
    root.append(g);
    if (i % labelEvery === 0) {
      root.append(svg('text', {class: 'axis', x: M.left + i * slot + slot / 2, y: HEIGHT - M.bottom + 14,
        'text-anchor': 'middle'}, number));
    }
  });
  root.append(svg('text', {class: 'axis', x: M.left + plotW / 2, y: HEIGHT - 4, 'text-anchor': 'middle'},
    reports.length && reports.every((r) => isTimeWindow(r)) ? 'time window' : 'step'));

  if (medianNs > 0 && reports.some((r) => stepKind(r) === 'steady')) {
    const m = medianNs;
    root.append(svg('line', {class: 'median', x1: M.left, x2: W - M.right, y1: y(m), y2: y(m)}),
      svg('text', {class: 'median-label', x: W - M.right - 4, y: y(m) - 4, 'text-anchor': 'end'},
        'steady median ' + fmt.ms(m)));
  }
  return root;
}

// The communication categories only where the data has them (`comm`: cross-rank data).
export function categoryLegend(extra = [], {comm = false} = {}) {
  return h('div', {class: 'legend'},
    CATEGORIES.filter((c) => (comm || !c.comm) && c.key !== 'unexplained').map((c) => h('span', {class: 'legend-item'}, h('i', {style: {background: c.color}}), c.label)),
    extra);
}
