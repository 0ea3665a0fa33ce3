-- v7: an import is complete or absent. A process created by `gpuspy import` (identity with a
-- content hash) is pending until its stream closes after the last batch; pending processes are
-- listed nowhere and dropped on open (store.h: CommitImport). Existing rows are complete.
ALTER TABLE processes ADD COLUMN pending INTEGER NOT NULL DEFAULT 0;
