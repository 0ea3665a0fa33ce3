// What a step's GPU time is made of (StepReport.kernel_classes, from the analysis' kernel
// classifier): a bar of kernel classes and the same as a line of text. Shares are of the summed
// kernel time, so they add up to 100 % even when streams overlap.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';
// The kernel classes' colours and names: the palette gpuspyd generates from viewer/palette/.
import {CLASS_COLORS, CLASS_LABELS} from './cause_colors.js';

export function gpuTime(classes) {
  if (!classes || !classes.length) return null;
  const share = (c) => c.share || 0;
  return h('div', {class: 'gpu-time'},
    h('p', {class: 'gpu-time-line'}, 'GPU time: ' + classes.map((c) => `${c.kernel_class} ${fmt.pct(share(c))}`).join(' · ')),
    h('div', {class: 'hbar'}, classes.map((c) => h('span', {class: 'gpu-time-class',
      style: {width: (100 * share(c)) + '%', background: CLASS_COLORS[c.kernel_class] || CLASS_COLORS.other},
      title: `${CLASS_LABELS[c.kernel_class] || c.kernel_class}: ${fmt.ms(num(c.ns))}, ${fmt.count(num(c.count))} kernels (${fmt.pct(share(c))})`}))));
}
