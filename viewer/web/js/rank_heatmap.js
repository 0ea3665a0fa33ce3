// Ranks x steps heatmap of a multi-rank job (JobSummary.steps from the cross-rank analysis): a
// row per rank, a column per step; each cell coloured by that rank's verdict in the step and
// darkened by the share of the step it spent waiting in collectives for the last rank; the rank
// the others waited for (the straggler) outlined with a dot. Canvas: a long job is ranks x
// thousands of cells. Clicking a cell opens that rank's step.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';
import {showTooltip, hideTooltip, keyValues} from './tooltip.js';
import {verdictColor, verdictOf} from './verdicts.js';

const LABEL_W = 64;       // rank labels
const HEAD_H = 18;        // step numbers
const MAX_CELL_W = 28;
const MIN_CELL_W = 3;     // narrower than this and the last steps that fit are shown instead
const ROW_H = 18;
const MIN_ROW_H = 4;
const MAX_BODY_H = 480;   // many ranks shrink their rows to stay on one screen
const MAX_WAIT_SHADE = 0.6;  // darkening of a cell that waited its whole step

// The cells of `summary` by rank and step, in order. {ranks: [r...], steps: [JobStep...]}
export function heatmapData(summary) {
  const steps = [...(summary.steps || [])].sort((a, b) => num(a.number) - num(b.number));
  const ranks = new Set();
  for (const s of steps) for (const c of s.ranks || []) ranks.add(num(c.rank));
  return {ranks: [...ranks].sort((a, b) => a - b), steps};
}

export const isMultiRank = (summary) => heatmapData(summary).ranks.length > 1;

// onSelect(cell, step): a click on a cell.
export function rankHeatmap(summary, {width, onSelect} = {}) {
  const all = heatmapData(summary);
  const W = Math.max(320, width || 900);
  const fit = Math.max(1, Math.floor((W - LABEL_W) / MIN_CELL_W));
  const steps = all.steps.slice(-fit);
  const ranks = all.ranks;
  const cellW = Math.min(MAX_CELL_W, (W - LABEL_W) / Math.max(1, steps.length));
  const rowH = ranks.length * ROW_H <= MAX_BODY_H ? ROW_H : Math.max(MIN_ROW_H, Math.floor(MAX_BODY_H / ranks.length));
  const H = HEAD_H + rowH * ranks.length;
  const rowOf = new Map(ranks.map((r, i) => [r, i]));

  const canvas = h('canvas', {class: 'heatmap-canvas'});
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(W * dpr);
  canvas.height = Math.round(H * dpr);
  canvas.style.width = W + 'px';
  canvas.style.height = H + 'px';
  const g = canvas.getContext('2d');
  g.scale(dpr, dpr);
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  g.fillStyle = '#6b7480';
  ranks.forEach((r, i) => { if (rowH >= 10) g.fillText('rank ' + r, 4, HEAD_H + i * rowH + rowH / 2); });
  const labelEvery = Math.ceil(32 / cellW);

  const stragglers = new Set();
  let marked = 0;
  steps.forEach((s, col) => {
    const x = LABEL_W + col * cellW;
    if (col % labelEvery === 0) {
      g.fillStyle = '#6b7480';
      g.fillText(String(num(s.number)), x + 1, HEAD_H / 2);
    }
    for (const c of s.ranks || []) {
      const y = HEAD_H + rowOf.get(num(c.rank)) * rowH;
      const gap = cellW > 6 ? 1 : 0;
      g.fillStyle = verdictColor(verdictOf(c));
      g.fillRect(x, y, cellW - gap, rowH - 1);
      const wall = num(c.wall_ns);
      const share = wall > 0 ? Math.min(1, num(c.wait_ns) / wall) : 0;
      if (share > 0) {
        g.fillStyle = `rgba(0,0,0,${(MAX_WAIT_SHADE * share).toFixed(3)})`;
        g.fillRect(x, y, cellW - gap, rowH - 1);
      }
      if (c.straggler) {
        stragglers.add(num(c.rank));
        ++marked;
        g.strokeStyle = '#111';
        g.lineWidth = 2;
        g.strokeRect(x + 1, y + 1, Math.max(1, cellW - gap - 2), Math.max(1, rowH - 3));
        if (cellW >= 8 && rowH >= 8) {
          g.fillStyle = '#fff';
          g.beginPath();
          g.arc(x + (cellW - gap) / 2, y + (rowH - 1) / 2, Math.min(cellW, rowH) / 6, 0, 2 * Math.PI);
          g.fill();
        }
      }
    }
  });

  // The cell under a mouse event, or null.
  const cellAt = (e) => {
    const box = canvas.getBoundingClientRect();
    const col = Math.floor((e.clientX - box.left - LABEL_W) / cellW);
    const row = Math.floor((e.clientY - box.top - HEAD_H) / rowH);
    if (col < 0 || col >= steps.length || row < 0 || row >= ranks.length) return null;
    const cell = (steps[col].ranks || []).find((c) => num(c.rank) === ranks[row]);
    return cell ? {cell, step: steps[col]} : null;
  };
  canvas.addEventListener('mousemove', (e) => {
    const at = cellAt(e);
    canvas.style.cursor = at ? 'pointer' : '';
    if (!at) return hideTooltip();
    const {cell: c, step: s} = at;
    const wall = num(c.wall_ns);
    showTooltip(e.clientX, e.clientY, h('strong', {}, `rank ${num(c.rank)} · step ${num(s.number)}`),
      c.straggler ? h('span', {class: 'muted'}, ' the others waited for this rank') : null,
      keyValues([['verdict', verdictOf(c)], ['wall', fmt.ms(wall)],
        ['waiting in collectives', fmt.ms(num(c.wait_ns)) + (wall ? ' (' + fmt.pct(num(c.wait_ns) / wall) + ')' : '')],
        ['exposed comm', fmt.ms(num(c.exposed_comm_ns))], ['est. lost', fmt.ms(num(c.lost_ns))],
        ['straggler of the step', num(s.straggler_rank) >= 0 ? 'rank ' + num(s.straggler_rank) : 'none']]));
  });
  canvas.addEventListener('mouseleave', hideTooltip);
  if (onSelect) {
    canvas.addEventListener('click', (e) => {
      const at = cellAt(e);
      if (!at) return;
      hideTooltip();
      onSelect(at.cell, at.step);
    });
  }

  const el = h('div', {class: 'rank-heatmap', dataset: {
    ranks: ranks.length, steps: steps.length, stragglerRanks: [...stragglers].sort((a, b) => a - b).join(','),
    stragglerCells: marked,
  }}, canvas,
  steps.length < all.steps.length
    ? h('p', {class: 'muted'}, `The last ${steps.length} of ${all.steps.length} steps (the ones that fit).`) : null);
  // Where a cell is on screen (client coordinates of its centre), for tests and the console.
  el.cellPosition = (rank, stepNumber) => {
    const col = steps.findIndex((s) => num(s.number) === stepNumber);
    if (col < 0 || !rowOf.has(rank)) return null;
    const box = canvas.getBoundingClientRect();
    return {x: box.left + LABEL_W + col * cellW + cellW / 2, y: box.top + HEAD_H + rowOf.get(rank) * rowH + rowH / 2};
  };
  return el;
}

// The verdicts shown in `summary`, the shade, and the straggler mark.
export function heatmapLegend(summary) {
  const verdicts = new Set();
  for (const s of summary.steps || []) for (const c of s.ranks || []) verdicts.add(verdictOf(c));
  const item = (swatch, label) => h('span', {class: 'legend-item'}, swatch, label);
  return h('div', {class: 'legend'},
    [...verdicts].sort().map((v) => item(h('i', {style: {background: verdictColor(v)}}), v)),
    h('span', {class: 'legend-sep'}, 'darker: more of the step waiting in collectives'),
    item(h('i', {class: 'straggler-swatch'}), 'straggler: the others waited for this rank'));
}
