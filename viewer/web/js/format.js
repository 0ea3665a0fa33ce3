// Numbers as people read them; the same units as the CLI (model/units.cc).

export function ms(ns, digits = 2) {
  return (ns / 1e6).toFixed(digits) + ' ms';
}

export function duration(ns) {
  const a = Math.abs(ns);
  if (a < 1e3) return Math.round(ns) + ' ns';
  if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 2 : 1) + ' us';
  if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : 1) + ' ms';
  return (ns / 1e9).toFixed(2) + ' s';
}

export function bytes(n) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i; }
  return i === 0 ? n + ' B' : n.toFixed(1) + ' ' + units[i];
}

// 612e12 -> "612 TFLOP/s", 1.23e12 -> "1.23 TB/s": three significant figures, decimal prefixes.
// The CLI's FormatFlopRate / FormatByteRate (model/units.cc).
export function rate(v, unit) {
  const prefixes = [[1e15, 'P'], [1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, '']];
  for (const [scale, p] of prefixes) {
    if (v >= scale || scale === 1) {
      const x = v / scale;
      return `${x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2)} ${p}${unit}`;
    }
  }
  return '';
}

export const pct = (x) => (100 * x).toFixed(1) + '%';

export function count(n) {
  return Number(n).toLocaleString('en-US');
}

// "3 s ago", "5 min ago" from unix ns (collector clock) against the browser's clock.
export function ago(unixNs) {
  if (!unixNs) return '—';
  const s = Math.max(0, (Date.now() - unixNs / 1e6) / 1000);
  if (s < 60) return Math.round(s) + ' s ago';
  if (s < 3600) return Math.round(s / 60) + ' min ago';
  if (s < 86400) return (s / 3600).toFixed(1) + ' h ago';
  return (s / 86400).toFixed(1) + ' d ago';
}

export function dateTime(unixNs) {
  if (!unixNs) return '—';
  return new Date(unixNs / 1e6).toLocaleString();
}

// C++ kernel names run to hundreds of characters of templates and parameters; tables show the
// function's own name (templates folded, namespaces beyond the last two dropped) and keep the full
// name in a tooltip.
export function shortKernel(name) {
  const s = name.replace(/^void /, '').replace(/\(anonymous namespace\)/g, '{anon}');
  let depth = 0, out = '';
  for (const c of s) {
    if (c === '<') { if (depth++ === 0) out += '<…>'; continue; }
    if (c === '>') { depth = Math.max(0, depth - 1); continue; }
    if (c === '(' && depth === 0) break;
    if (depth === 0) out += c;
  }
  const parts = out.split('::');
  if (parts.length > 2) out = '…::' + parts.slice(-2).join('::');
  if (!out) out = name;
  return cutName(out, 90);
}

// `text` in at most `max` characters: whole, or cut after a word or template boundary (a space,
// ',', '<', '(', '::', '_', a camelCase hump) with an ellipsis, so that a cut never ends
// mid-word ("…float, float x12", "ncclWor" read as names of their own). A hard cut only where the
// text has no boundary at all. Where a name is cut, its element has the full name as a
// tooltip (the tables' title, the timeline's hover).
export function cutName(text, max) {
  if (text.length <= max) return text;
  const limit = max - 1;  // room for the ellipsis
  let cut = -1;
  for (let i = limit; i >= 2; --i) {
    const prev = text[i - 1], next = text[i];
    if (' ,<(_'.includes(prev) || (prev === ':' && text[i - 2] === ':') || next === '<' || next === '(' ||
        (/[a-z0-9]/.test(prev) && /[A-Z]/.test(next))) { cut = i; break; }
  }
  const head = (cut > 0 ? text.slice(0, cut) : text.slice(0, limit)).replace(/(?:[\s,_]|::)+$/, '');
  return head + '…';
}

// The same as shortKernel for a set of names that must stay told apart (a table, a timeline):
// names whose short forms collide (vectorized_elementwise_kernel<…> for add and for mul) keep
// their template arguments, themselves shortened (namespaces dropped, nested templates folded);
// any that still collide get their full name, cut. Returns Map(name -> label).
export function shortKernelNames(names) {
  const labels = new Map();
  const groups = new Map();
  for (const name of new Set(names)) {
    const s = shortKernel(name);
    if (!groups.has(s)) groups.set(s, []);
    groups.get(s).push(name);
  }
  for (const [short, members] of groups) {
    if (members.length === 1) {
      labels.set(members[0], short);
      continue;
    }
    const longer = members.map((n) => [n, withTemplateArgs(n)]);
    const counts = new Map();
    for (const [, l] of longer) counts.set(l, (counts.get(l) || 0) + 1);
    for (const [n, l] of longer) {
      labels.set(n, counts.get(l) === 1 ? l : cutName(n, 160));
    }
  }
  return labels;
}

// "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, …>(…)"
// -> "vectorized_elementwise_kernel<4, CUDAFunctor_add<…>, Array<…>>": the function's own name
// and its first-level template arguments, each without namespaces.
function withTemplateArgs(name) {
  const s = name.replace(/^void /, '').replace(/\(anonymous namespace\)/g, '{anon}');
  let depth = 0, out = '';
  for (const c of s) {
    if (c === '(' && depth === 0) break;
    if (c === '<') {
      ++depth;
      if (depth === 1) out += '<';
      else if (depth === 2) out += '<…';
      continue;
    }
    if (c === '>') {
      if (depth === 1 || depth === 2) out += '>';
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (depth <= 1) out += c;
  }
  // Namespaces off every identifier: "at::native::CUDAFunctor_add" -> "CUDAFunctor_add".
  out = out.replace(/(?:[A-Za-z_{}][\w{}]*::)+/g, '');
  return cutName(out, 120);
}

// 1, 2, 5 x 10^k: axis ticks that read well.
export function niceStep(range, targetTicks) {
  const raw = range / Math.max(1, targetTicks);
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
  return 10 * p;
}
