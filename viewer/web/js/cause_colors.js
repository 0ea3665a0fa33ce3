// One colour per cause of lost time, wherever it is drawn: the breakdown bars and their legend,
// the timeline's idle shading and its legend, and the verdict heatmap. A verdict takes the colour
// of the time it explains (sync_stall the sync-blocked idle, host_bound the host-work idle, ...).

export const CAUSE_COLORS = {
  compute: '#4e79a7',
  comm_wait: '#9c4f2b',
  comm_transfer: '#d9a26b',
  copy: '#f28e2b',
  sync: '#e15759',
  launch: '#b07aa1',
  input: '#edc948',
  host: '#a0cbe8',       // GPU idle while the host does other (non-CUDA) work
  cuda_call: '#76b7b2',  // GPU idle while the host is inside CUDA calls with nothing to wait for
  unexplained: '#bab0ac',
};
