// Draws the timeline on a 2D canvas. Only the visible slice of each row is visited (binary
// search), and events narrower than a pixel are merged into one 1-px column per pixel, so a frame
// costs O(visible events) JS work and O(width x rows) drawing, whatever the step holds.
import {PALETTE, IDLE_COLORS, KIND} from './colors.js';
import {cutName, duration, niceStep} from '../format.js';

export const GUTTER = 190;   // lane labels: room for "dataloader worker 12" beside a row label
export const AXIS_H = 24;    // time axis
const FONT = '11px system-ui, -apple-system, "Segoe UI", sans-serif';
const LABEL_H = 12;          // a label's height at FONT

// `text` cut (with an ellipsis, at a word or template boundary: format.js cutName) to fit
// `width` pixels as `ctx` draws it: measured, not estimated, since labels must never run into
// each other. '' when not even a few characters fit.
export function fitLabel(ctx, text, width) {
  if (ctx.measureText(text).width <= width) return text;
  let lo = 0, hi = text.length - 1;
  while (lo < hi) {  // the most characters whose cut fits
    const mid = (lo + hi + 1) >> 1;
    if (ctx.measureText(cutName(text, mid)).width <= width) lo = mid; else hi = mid - 1;
  }
  const cut = lo >= 2 ? cutName(text, lo) : '';
  return cut.length >= 3 && ctx.measureText(cut).width <= width ? cut : '';
}

// view: {start, end} in ns relative to the step start. sel: {selected, related, hover} indexes.
export function drawTimeline(ctx, m, view, width, height, sel) {
  const t0 = performance.now();
  const plotW = width - GUTTER;
  const scale = plotW / (view.end - view.start);
  const X = (t) => GUTTER + (t - view.start) * scale;
  const stats = {rects: 0, columns: 0, labels: 0, visible: 0, byKind: new Array(9).fill(0)};

  ctx.clearRect(0, 0, width, height);
  ctx.font = FONT;
  ctx.textBaseline = 'middle';

  ctx.save();
  ctx.beginPath();
  ctx.rect(GUTTER, 0, plotW, height);
  ctx.clip();
  ctx.translate(0, AXIS_H);

  // Outside the step: greyed, so spill-over from neighbouring steps reads as context.
  ctx.fillStyle = '#f1f1f1';
  if (view.start < 0) ctx.fillRect(GUTTER, 0, Math.min(plotW, X(0) - GUTTER), m.height);
  if (view.end > m.wall) ctx.fillRect(Math.max(GUTTER, X(m.wall)), 0, width, m.height);

  // GPU idle, shaded by cause across the whole GPU band and solid in the idle row.
  const ir = m.idleRow;
  for (let j = ir.firstEndingAfter(view.start); j < ir.start.length && ir.start[j] <= view.end; ++j) {
    const x0 = Math.max(GUTTER, X(ir.start[j])), x1 = Math.min(width, X(ir.end[j]));
    const color = IDLE_COLORS[ir.causes[ir.cause[j]]] || '#ccc';
    ctx.globalAlpha = 0.16;
    ctx.fillStyle = color;
    ctx.fillRect(x0, m.gpuTop, Math.max(1, x1 - x0), m.gpuBottom - m.gpuTop);
    ctx.globalAlpha = 1;
    ctx.fillRect(x0, ir.y + 2, Math.max(1, x1 - x0), ir.height - 4);
  }
  // Host time blocked on the GPU: a red band behind the blocking thread's API row.
  ctx.globalAlpha = 0.18;
  ctx.fillStyle = PALETTE[12];
  for (const b of m.blocking) {
    if (b.end < view.start || b.start > view.end) continue;
    const rows = b.lane >= 0 && m.apiRowOfLane.has(b.lane) ? [m.apiRowOfLane.get(b.lane)] : [...m.apiRowOfLane.values()];
    for (const r of rows) ctx.fillRect(X(b.start), r.y - 1, Math.max(1, (b.end - b.start) * scale), r.height + 2);
  }
  ctx.globalAlpha = 1;

  // Events: rectangles batched per colour, labels collected and drawn last.
  const batches = PALETTE.map(() => []);
  const labels = [];
  for (const r of m.rows) {
    if (r === ir) continue;
    const y = r.y, hgt = r.height, n = r.start.length;
    const {start, end, color, ids} = r;
    let colX = -1, colColor = 0;  // the pending merged 1-px column
    for (let j = r.firstEndingAfter(view.start); j < n; ++j) {
      const s = start[j];
      if (s > view.end) break;
      const e = end[j];
      if (e < view.start) continue;
      stats.visible++;
      stats.byKind[m.kind[ids[j]]]++;
      const x0 = X(s), x1 = X(e);
      if (x1 - x0 < 1) {
        const px = Math.floor(x0);
        if (px !== colX) {
          if (colX >= 0) { batches[colColor].push(colX, y, 1, hgt); stats.columns++; }
          colX = px;
          colColor = color[j];
        }
        continue;
      }
      const bx = Math.max(GUTTER - 1, x0), bw = Math.min(width + 1, x1) - bx;
      batches[color[j]].push(bx, y, bw, hgt);
      stats.rects++;
      if (bw > 36 && hgt >= 14) labels.push(bx, y + hgt / 2, bw, ids[j]);
    }
    if (colX >= 0) { batches[colColor].push(colX, y, 1, hgt); stats.columns++; }
  }
  for (let c = 0; c < batches.length; ++c) {
    const b = batches[c];
    if (!b.length) continue;
    ctx.fillStyle = PALETTE[c];
    ctx.beginPath();
    for (let k = 0; k < b.length; k += 4) ctx.rect(b[k], b[k + 1], b[k + 2], b[k + 3]);
    ctx.fill();
  }
  // Labels: only where one fits inside its bar (cut at a boundary, else left out; the full name
  // is in the hover), and never over the previous label of the same row. Widths are measured
  // (cached per name), so a label cannot spill past its bar into its neighbour's.
  stats.labelBoxes = [];
  let rowY = NaN, rowRight = -Infinity;
  for (let k = 0; k < labels.length; k += 4) {
    const i = labels[k + 3], bx = labels[k], cy = labels[k + 1], room = labels[k + 2] - 6;
    if (cy !== rowY) { rowY = cy; rowRight = -Infinity; }
    const x = Math.max(bx + 3, rowRight + 4);
    const avail = bx + 3 + room - x;
    if (avail < 12) continue;
    const full = m.labels[m.name[i]];
    let w = m.labelWidth.get(m.name[i]);
    if (w === undefined) { w = ctx.measureText(full).width; m.labelWidth.set(m.name[i], w); }
    const text = w <= avail ? full : fitLabel(ctx, full, avail);
    if (!text) continue;
    const tw = text === full ? w : ctx.measureText(text).width;
    ctx.fillStyle = m.kind[i] === KIND.nvtx || m.kind[i] === KIND.api ? '#1d2a1d' : '#fff';
    ctx.fillText(text, x, cy);
    rowRight = x + tw;
    stats.labelBoxes.push([x, cy - LABEL_H / 2 + AXIS_H, tw, LABEL_H]);
    stats.labels++;
  }

  // Selection: outline the event and what it is correlated with, joined by an arrow.
  const outline = (i, colour) => {
    if (i < 0) return null;
    const r = m.rows[m.rowOfEvent[i]];
    const x0 = X(m.start[i]), w = Math.max(2, (m.end[i] - m.start[i]) * scale);
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.strokeRect(x0 - 1, r.y - 1, w + 2, r.height + 2);
    return {x: x0, y: r.y, h: r.height};
  };
  if (sel.hover >= 0 && sel.hover !== sel.selected) outline(sel.hover, 'rgba(0,0,0,0.45)');
  const a = outline(sel.selected, '#111');
  const b = outline(sel.related, '#d62728');
  if (a && b) {
    const [from, to] = a.y < b.y ? [a, b] : [b, a];
    ctx.strokeStyle = '#d62728';
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(from.x, from.y + from.h);
    ctx.lineTo(to.x, to.y);
    ctx.stroke();
  }
  ctx.restore();

  drawAxis(ctx, view, width, X);
  stats.laneLabels = drawGutter(ctx, m, height);
  stats.ms = performance.now() - t0;
  return stats;
}

function drawAxis(ctx, view, width, X) {
  ctx.fillStyle = '#fafafa';
  ctx.fillRect(GUTTER, 0, width - GUTTER, AXIS_H);
  const span = view.end - view.start;
  const step = niceStep(span, Math.max(2, (width - GUTTER) / 110));
  ctx.strokeStyle = '#ccc';
  ctx.fillStyle = '#555';
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let t = Math.ceil(view.start / step) * step; t <= view.end; t += step) {
    const x = Math.round(X(t)) + 0.5;
    ctx.moveTo(x, AXIS_H - 6);
    ctx.lineTo(x, AXIS_H);
    ctx.fillText(duration(t), x + 3, AXIS_H / 2);
  }
  ctx.stroke();
  ctx.strokeStyle = '#ddd';
  ctx.beginPath();
  ctx.moveTo(GUTTER, AXIS_H + 0.5);
  ctx.lineTo(width, AXIS_H + 0.5);
  ctx.stroke();
}

// Returns the lane labels as drawn, top to bottom.
function drawGutter(ctx, m, height) {
  const drawn = [];
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, GUTTER, height);
  ctx.fillStyle = '#666';
  ctx.fillText('time since step start', 6, AXIS_H / 2);
  ctx.save();
  ctx.translate(0, AXIS_H);
  let lastLane = null;
  for (const r of m.rows) {
    const laneStart = r.lane !== lastLane;
    if (laneStart) {
      ctx.strokeStyle = '#e4e4e4';
      ctx.beginPath();
      ctx.moveTo(0, r.y - 1.5);
      ctx.lineTo(ctx.canvas.width, r.y - 1.5);
      ctx.stroke();
    }
    const y = r.y + r.height / 2;
    if (r.kind === 'idle') {
      ctx.fillStyle = '#222';
      ctx.fillText('GPU idle (cause)', 6, y);
    } else if (laneStart) {
      ctx.fillStyle = '#222';
      // Cut to the room left of the row's own label, so a long thread name never runs into it.
      // The names are the analysis's (main thread, dataloader worker 1, ...): drawn, not made.
      const text = fitLabel(ctx, m.lanesJson[r.lane].label, (r.label ? GUTTER - 58 : GUTTER) - 6 - 6);
      ctx.fillText(text, 6, y);
      drawn.push(text);
      if (r.label) { ctx.fillStyle = '#888'; ctx.fillText(fitLabel(ctx, r.label, 58 - 4), GUTTER - 58, y); }
    } else if (r.label) {
      ctx.fillStyle = '#888';
      ctx.fillText(fitLabel(ctx, r.label, 58 - 4), GUTTER - 58, y);
    }
    lastLane = r.lane;
  }
  ctx.restore();
  return drawn;
}
