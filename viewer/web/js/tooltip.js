// One floating tooltip for the whole page (charts and the timeline share it).
import {h, fill} from './dom.js';

let tip = null;

export function showTooltip(clientX, clientY, ...content) {
  if (!tip) {
    tip = h('div', {class: 'tooltip', role: 'tooltip'});
    document.body.append(tip);
  }
  fill(tip, ...content);
  tip.style.display = 'block';
  const pad = 14;
  const w = tip.offsetWidth, hgt = tip.offsetHeight;
  let x = clientX + pad, y = clientY + pad;
  if (x + w > innerWidth - 4) x = Math.max(4, clientX - w - pad);
  if (y + hgt > innerHeight - 4) y = Math.max(4, clientY - hgt - pad);
  tip.style.left = x + 'px';
  tip.style.top = y + 'px';
}

export function hideTooltip() {
  if (tip) tip.style.display = 'none';
}

// Rows of "key: value" for tooltips and detail panels.
export function keyValues(pairs) {
  return h('dl', {class: 'kv'}, pairs.filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}
