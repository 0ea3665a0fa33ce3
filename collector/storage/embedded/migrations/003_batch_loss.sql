-- v3: each batch's loss counters, so the report can say which steps a process's drops fall into
-- without reading payloads (rows from before stay 0: their drops are reported per process).
ALTER TABLE batches ADD COLUMN cupti_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN queue_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE batches ADD COLUMN spill_dropped INTEGER NOT NULL DEFAULT 0;
