// Timeline colours: a fixed palette indexed by a small integer per event, so drawing can batch
// every rectangle of one colour into a single fill.
import {CAUSE_COLORS} from '../cause_colors.js';

export const KIND = {kernel: 0, memcpy: 1, memset: 2, sync: 3, api: 4, nvtx: 5, mark: 6, overhead: 7, graph: 8};

const KERNEL_COLORS = ['#4e79a7', '#5f8fc0', '#3b6691', '#76a1cf', '#2f5d8a', '#6b8fb8', '#4a6fa0', '#86acd6'];
const NVTX_COLORS = ['#59a14f', '#7bbf6f', '#8cd17d', '#a9dca0'];

export const PALETTE = [
  ...KERNEL_COLORS,        // 0-7   kernels, by name
  '#f28e2b',               // 8     copy HtoD
  '#d4691a',               // 9     copy DtoH
  '#ffbe7d',               // 10    copy DtoD / other
  '#9c755f',               // 11    memset
  '#e15759',               // 12    sync record / blocking call
  '#8a9bb0',               // 13    API (launches and the rest)
  '#c4a35a',               // 14    API allocator calls
  ...NVTX_COLORS,          // 15-18 NVTX by depth
  '#333333',               // 19    NVTX mark
  '#cfcfcf',               // 20    CUPTI overhead
  '#b07aa1',               // 21    CUDA graph
];
export const SYNC_COLOR = 12;

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; ++i) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function colorOf(kind, name, depth) {
  switch (kind) {
    case KIND.kernel: return hash(name) % KERNEL_COLORS.length;
    case KIND.memcpy: return name.endsWith('HtoD') ? 8 : name.endsWith('DtoH') ? 9 : 10;
    case KIND.memset: return 11;
    case KIND.sync: return 12;
    case KIND.api:
      if (/Synchronize|^cudaMemcpy$|^cuMemcpy[DH]to[DH]$/.test(name)) return 12;
      if (/Malloc|Free|MemAlloc|MemFree/.test(name)) return 14;
      return 13;
    case KIND.nvtx: return 15 + Math.min(depth, NVTX_COLORS.length - 1);
    case KIND.mark: return 19;
    case KIND.overhead: return 20;
    default: return 21;
  }
}

// GPU idle causes, in the order of the timeline JSON's idle_causes.
export const IDLE_COLORS = {
  sync_blocked: CAUSE_COLORS.sync,
  launch_bound: CAUSE_COLORS.launch,
  input: CAUSE_COLORS.input,
  host_other: CAUSE_COLORS.host,
  cuda_call: CAUSE_COLORS.cuda_call,
};
