// The job page's Rename… and Delete… buttons: each asks first (prompt, confirm), calls the API, and
// leaves for the renamed job or the jobs list. A live job's delete is refused by gpuspyd (409);
// the user is then asked again whether to delete it anyway (force).
import {api} from './api.js';
import {h} from './dom.js';

export function jobActions(jobId) {
  const rename = async () => {
    const to = prompt('Rename job ' + jobId + ' to:', jobId);
    if (to === null || to.trim() === '' || to === jobId) return;
    try {
      await api.renameJob(jobId, to.trim());
      location.hash = '#/job/' + encodeURIComponent(to.trim());
    } catch (e) {
      alert('Rename failed: ' + e.message);
    }
  };
  const remove = async () => {
    if (!confirm('Delete job ' + jobId + ' and all its events? This cannot be undone.')) return;
    try {
      await api.deleteJob(jobId, false);
    } catch (e) {
      if (e.status !== 409) return alert('Delete failed: ' + e.message);
      if (!confirm(e.message + '\n\nDelete it anyway?')) return;
      try { await api.deleteJob(jobId, true); } catch (e2) { return alert('Delete failed: ' + e2.message); }
    }
    location.hash = '#/';
  };
  return [
    h('button', {type: 'button', class: 'button', id: 'rename-job', onclick: rename}, 'Rename…'),
    h('button', {type: 'button', class: 'button danger', id: 'delete-job', onclick: remove}, 'Delete…'),
  ];
}
