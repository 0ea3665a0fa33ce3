// Element creation without innerHTML: kernel names, NVTX messages and job ids come from the
// profiled program and must never be parsed as markup.

// h('a', {href: '#/', class: 'x', onclick: fn, dataset: {job: 'j'}}, 'text', child, [more])
export function h(tag, attrs, ...children) {
  const el = tag.startsWith('svg:')
    ? document.createElementNS('http://www.w3.org/2000/svg', tag.slice(4))
    : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k === 'class' && el instanceof SVGElement) el.setAttribute('class', v);
    else if (k === 'class') el.className = v;
    else if (k in el && !(el instanceof SVGElement) && k !== 'list') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

export const svg = (tag, attrs, ...children) => h('svg:' + tag, attrs, ...children);

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// Replaces `el`'s children: keeps scroll position and the element itself (listeners, focus).
export function fill(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

// A <code> command with a copy button; falls back to selecting the text where the clipboard API
// is unavailable (plain http on a non-loopback address is not a secure context).
export function commandHint(command) {
  const code = h('code', {class: 'cmd'}, command);
  const button = h('button', {
    class: 'copy', type: 'button', title: 'Copy to clipboard',
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(command);
        button.textContent = 'copied';
      } catch {
        const range = document.createRange();
        range.selectNodeContents(code);
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        button.textContent = 'selected';
      }
      setTimeout(() => { button.textContent = 'copy'; }, 1500);
    },
  }, 'copy');
  return h('span', {class: 'cmd-hint'}, code, button);
}
