// A step's communication on one rank (StepReport.comm, from the cross-rank analysis) as text: the
// time in collectives split into waiting for the last rank and moving data, then the collectives
// waited on longest.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';

// CommSummary.waited_for_rank / CollectiveWait.last_rank: -1 nobody, -2 a peer not captured.
function waitedFor(rank) {
  if (num(rank) >= 0) return 'rank ' + num(rank);
  return num(rank) === -2 ? 'a rank not captured' : '';
}

// "communication 12.30 ms = waiting 8.10 ms (for rank 2) + transfer 4.20 ms; exposed 3.00 ms",
// then the collectives waited on longest.
export function commSummary(comm) {
  const forWhom = waitedFor(comm.waited_for_rank);
  const listed = (comm.collectives || []).filter((c) => num(c.wait_ns) > 0);
  return h('div', {class: 'comm-summary'},
    h('p', {class: 'comm-line'}, `communication ${fmt.ms(num(comm.comm_ns))} = waiting ${fmt.ms(num(comm.wait_ns))}${forWhom ? ' (for ' + forWhom + ')' : ''}` +
      ` + transfer ${fmt.ms(num(comm.transfer_ns))}` +
      (num(comm.unattributed_ns) > 0 ? ` (${fmt.ms(num(comm.unattributed_ns))} of it unattributed: no peer captured)` : '') +
      `; exposed ${fmt.ms(num(comm.exposed_ns))}` +
      (comm.bus_bandwidth_gbps ? `; bus bandwidth ${comm.bus_bandwidth_gbps.toFixed(1)} GB/s` : '')),
    listed.length ? h('table', {class: 'table collectives-table'},
      h('thead', {}, h('tr', {}, ['collective', 'group', 'waited', 'of', 'for', 'size'].map((t) => h('th', {}, t)))),
      h('tbody', {}, listed.map((c) => h('tr', {class: 'collective-row'},
        h('td', {}, h('code', {}, (c.op || 'collective') + ' #' + num(c.index))),
        h('td', {}, c.group || '—'),
        h('td', {class: 'num'}, fmt.ms(num(c.wait_ns))),
        h('td', {class: 'num'}, fmt.ms(num(c.duration_ns))),
        h('td', {}, waitedFor(c.last_rank) || '—'),
        h('td', {class: 'num'}, num(c.bytes) ? fmt.bytes(num(c.bytes)) : '—'))))) : null);
}
