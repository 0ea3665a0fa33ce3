// The collector's HTTP/JSON API (README "HTTP API"). Answers are the Query service's messages as
// proto3 JSON: 64-bit integers arrive as strings and zero values are left out, so read numbers
// through num().

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export const num = (v) => (v === undefined || v === null ? 0 : Number(v));

export async function getJson(path, signal) {
  let res;
  try {
    res = await fetch(path, {signal, headers: {Accept: 'application/json'}});
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'cannot reach gpuspyd (' + e.message + ')');
  }
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, (body && body.error) || res.statusText);
  return body;
}

// DELETE or POST: the changes the API offers (a job deleted or renamed). No body; parameters go in
// the query, as for reading. The browser adds Origin, by which gpuspyd refuses other sites' pages.
export async function send(method, path) {
  let res;
  try {
    res = await fetch(path, {method, headers: {Accept: 'application/json'}});
  } catch (e) {
    throw new ApiError(0, 'cannot reach gpuspyd (' + e.message + ')');
  }
  const body = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, (body && body.error) || res.statusText);
  return body;
}

const job = (id) => '/api/jobs/' + encodeURIComponent(id);

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? '?' + s : '';
}

export const api = {
  jobs: (signal) => getJson('/api/jobs', signal),
  steps: (id, process, signal) => getJson(job(id) + '/steps' + query({process}), signal),
  reports: (id, params, signal) => getJson(job(id) + '/report' + query(params), signal),
  summary: (id, signal) => getJson(job(id) + '/summary', signal),
  timeline: (id, process, step, signal) => getJson(job(id) + '/timeline' + query({process, step}), signal),
  traceUrl: (id, {process, steps} = {}) => job(id) + '/trace' + query({process, steps}),
  diff: (a, b, signal) => getJson('/api/diff' + query({a, b}), signal),
  deleteJob: (id, force) => send('DELETE', job(id) + query({force: force ? 1 : ''})),
  renameJob: (id, to) => send('POST', job(id) + '/rename' + query({to})),
};
