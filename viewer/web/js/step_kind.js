// Whether a step is a time window, not a step: the viewer's one copy of the collector's rule
// (collector/analysis/step_source.h). A process whose steps were not found (no NVTX range matched
// the step pattern, no repeating kernel sequence) is cut into fixed windows, source "window:<ms>ms";
// they are labelled "Window N", never steady.

export function isTimeWindow(step) {
  return Boolean(step && typeof step.source === 'string' && step.source.startsWith('window:'));
}

// 'window' or 'step', for running text.
export function stepNoun(step) {
  return isTimeWindow(step) ? 'window' : 'step';
}

// "Window 3" / "Step 3".
export function stepTitle(step, number) {
  return (isTimeWindow(step) ? 'Window ' : 'Step ') + number;
}
