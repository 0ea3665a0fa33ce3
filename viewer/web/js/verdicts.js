// A step's verdict (its primary bottleneck's detector) as a colour, for the ranks x steps heatmap.
// Communication verdicts are browns (the palette's comm colours), the rank the others wait for
// is the one loud colour.

import {CAUSE_COLORS} from './cause_colors.js';

const COLORS = {
  none: '#59a14f',
  gpu_bound: CAUSE_COLORS.compute,
  gpu_idle: CAUSE_COLORS.unexplained,
  sync_stall: CAUSE_COLORS.sync,
  copy_dominated: CAUSE_COLORS.copy,
  input_stall: CAUSE_COLORS.input,
  launch_storm: CAUSE_COLORS.launch,
  host_bound: CAUSE_COLORS.host,
  cuda_api_bound: CAUSE_COLORS.cuda_call,
  insufficient_data: '#e8e8e8',
  alloc_churn: '#76b7b2',
  fp32_gemm: '#86bcb6',
  unfused_elementwise: '#9467bd',
  unfused_attention: '#6b5b95',
  memory_growth: '#c05780',
  warmup: '#d4d4d4',
  outlier_step: '#8c8c8c',
  straggler: '#d62728',
  straggler_wait: CAUSE_COLORS.comm_wait,
  exposed_comm: CAUSE_COLORS.comm_transfer,
  comm_storm: '#ff9da7',
};
const UNKNOWN = '#79706e';

export const verdictOf = (cell) => cell.primary_bottleneck || 'none';
export const verdictColor = (verdict) => COLORS[verdict] || UNKNOWN;
