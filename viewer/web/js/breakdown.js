// Where a step's wall time went, as the categories the charts stack. Computed from the
// report's breakdown so the categories always add up to the step's wall time:
//   compute      GPU running kernels (union), less exposed communication
//   comm wait    exposed communication (no compute, copy or memset running) spent waiting in
//                collectives for the last rank, and
//   comm xfer    the rest of it, moving data; the exposed time is split in the ratio of the
//                step's wait to transfer (the analysis gives the split of all collective time,
//                not of the exposed part). Both zero for a step without cross-rank data.
//   copy         GPU busy with copies/memsets while no kernel runs
//   sync         GPU idle while the host waits in a synchronizing call
//   launch       GPU idle while the host launches (launch-bound)
//   input        GPU idle, host doing no CUDA work, and the step has an input_stall finding
//   other        GPU idle while the host does other, non-CUDA work (host_bound's time)
//   cudaCall     GPU idle while the host is inside CUDA calls with nothing on the GPU to wait
//                for: context creation, module loading, allocation (cuda_api_bound's time)
import {num} from './api.js';
import {CAUSE_COLORS} from './cause_colors.js';
import {isTimeWindow} from './step_kind.js';

export const CATEGORIES = [
  {key: 'compute', label: 'compute', color: CAUSE_COLORS.compute},
  {key: 'commWait', label: 'comm: waiting for a rank', color: CAUSE_COLORS.comm_wait, comm: true},
  {key: 'commTransfer', label: 'comm: transfer', color: CAUSE_COLORS.comm_transfer, comm: true},
  {key: 'copy', label: 'copy', color: CAUSE_COLORS.copy},
  {key: 'sync', label: 'sync-blocked idle', color: CAUSE_COLORS.sync},
  {key: 'launch', label: 'launch-bound idle', color: CAUSE_COLORS.launch},
  {key: 'input', label: 'input-stall idle', color: CAUSE_COLORS.input},
  {key: 'other', label: 'host-work idle', color: CAUSE_COLORS.host},
  {key: 'cudaCall', label: 'in-CUDA-call idle', color: CAUSE_COLORS.cuda_call},
];

// Whether any of `reports` has the cross-rank communication split (the comm categories apply).
export const hasComm = (reports) => reports.some((r) => r.comm);

export function hasFinding(report, detector) {
  return (report.findings || []).some((f) => f.detector === detector);
}

export function categorize(report) {
  const b = report.breakdown || {};
  const {wait, transfer} = exposedComm(report);
  return {
    compute: num(b.kernel_ns) - wait - transfer,
    commWait: wait,
    commTransfer: transfer,
    copy: Math.max(0, num(b.gpu_busy_ns) - num(b.kernel_ns)),
    sync: num(b.idle_sync_blocked_ns),
    launch: num(b.idle_launch_bound_ns),
    // The report attributes idle time to input and other host work itself (idle_attribution.h).
    input: num(b.idle_input_ns),
    other: num(b.idle_host_other_ns),
    cudaCall: num(b.idle_cuda_call_ns),
  };
}

// The step's exposed communication as {wait, transfer} (see the top of this file).
export function exposedComm(report) {
  const b = report.breakdown || {};
  const exposed = Math.min(num(b.exposed_comm_ns), num(b.kernel_ns));
  const wait = num(b.comm_wait_ns), transfer = num(b.comm_transfer_ns);
  if (exposed <= 0 || wait + transfer <= 0) return {wait: 0, transfer: 0};
  const w = Math.round(exposed * wait / (wait + transfer));
  return {wait: w, transfer: exposed - w};
}

// 'steady', 'warmup' or 'outlier' (the cross-step detectors say which); 'window' for a time
// window, which is no step at all (step_kind.js).
export function stepKind(report) {
  if (isTimeWindow(report.step)) return 'window';
  if (report.steady_state) return 'steady';
  if (hasFinding(report, 'warmup')) return 'warmup';
  if (hasFinding(report, 'outlier_step')) return 'outlier';
  return 'unsteady';
}

export const STEP_KIND_LABEL = {steady: 'steady', warmup: 'warm-up', outlier: 'outlier', unsteady: 'not steady',
  window: 'time window, not a step'};

export function median(values) {
  if (!values.length) return 0;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
