// Top kernels table (a step's or the job's): where GPU time goes, and whether the GEMMs use
// tensor cores.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';

export function kernelTable(kernels) {
  if (!kernels.length) return h('p', {class: 'muted'}, 'No kernels.');
  const labels = fmt.shortKernelNames(kernels.map((k) => k.name));
  return h('table', {class: 'table kernels-table'},
    h('thead', {}, h('tr', {}, ['kernel', 'count', 'total', 'median', 'tensor cores'].map((t) => h('th', {}, t)))),
    h('tbody', {}, kernels.map((k) => h('tr', {class: 'kernel-row'},
      h('td', {class: 'kernel-name', title: k.name}, labels.get(k.name)),
      h('td', {class: 'num'}, fmt.count(num(k.count))),
      h('td', {class: 'num'}, fmt.duration(num(k.total_ns))),
      h('td', {class: 'num'}, fmt.duration(num(k.median_ns))),
      h('td', {class: k.tensor_cores ? 'yes' : 'no'}, k.tensor_cores ? 'yes' : 'no')))));
}
