-- 005_pending_imports: an import is complete or absent (issue 34), as in the embedded store's v7.
-- A process created by `gpuspy import` (identity with a content hash) is pending until its stream
-- closes after the last batch; pending processes are listed nowhere and dropped when the store
-- opens (store.h: CommitImport). Existing rows are complete; a constant default makes this a
-- catalog-only change.
ALTER TABLE processes ADD COLUMN pending boolean NOT NULL DEFAULT false;
-- Open finds the pending few among every process without a scan.
CREATE INDEX processes_pending ON processes(process_key) WHERE pending;
