// What a step's GPU time is made of (StepReport.kernel_classes, from the analysis' kernel
// classifier): a bar of kernel classes and the same as a line of text. Shares are of the summed
// kernel time, so they add up to 100 % even when streams overlap.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';
import {KERNEL_CLASSES} from './cause_colors.js';

// Colours and names from the one palette (viewer/palette/kernel_classes.cc, served in
// cause_colors.js): distinct from the causes' colours the step's time bar uses next to it.
const style = (c) => KERNEL_CLASSES[c] || KERNEL_CLASSES.other;

export function gpuTime(classes) {
  if (!classes || !classes.length) return null;
  const share = (c) => c.share || 0;
  return h('div', {class: 'gpu-time'},
    h('p', {class: 'gpu-time-line'}, 'GPU time: ' + classes.map((c) => `${c.kernel_class} ${fmt.pct(share(c))}`).join(' · ')),
    h('div', {class: 'hbar'}, classes.map((c) => h('span', {class: 'gpu-time-class',
      dataset: {kernelClass: c.kernel_class},
      style: {width: (100 * share(c)) + '%', background: style(c.kernel_class).color},
      title: `${KERNEL_CLASSES[c.kernel_class] ? style(c.kernel_class).label : c.kernel_class}: ${fmt.ms(num(c.ns))}, ${fmt.count(num(c.count))} kernels (${fmt.pct(share(c))})`}))));
}
