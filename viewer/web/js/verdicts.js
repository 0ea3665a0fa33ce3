// A step's verdict (its primary bottleneck's detector) as a colour, for the ranks x steps heatmap.
// Communication verdicts are browns (breakdown.js's comm colours), the rank the others wait for
// is the one loud colour.

const COLORS = {
  none: '#59a14f',
  gpu_bound: '#4e79a7',
  gpu_idle: '#bab0ac',
  sync_stall: '#e15759',
  copy_dominated: '#f28e2b',
  input_stall: '#edc948',
  launch_storm: '#b07aa1',
  alloc_churn: '#76b7b2',
  fp32_gemm: '#86bcb6',
  unfused_elementwise: '#9467bd',
  unfused_attention: '#6b5b95',
  memory_growth: '#c05780',
  warmup: '#d4d4d4',
  outlier_step: '#8c8c8c',
  straggler: '#d62728',
  straggler_wait: '#9c4f2b',
  exposed_comm: '#d9a26b',
  comm_storm: '#ff9da7',
};
const UNKNOWN = '#79706e';

export const verdictOf = (cell) => cell.primary_bottleneck || 'none';
export const verdictColor = (verdict) => COLORS[verdict] || UNKNOWN;
