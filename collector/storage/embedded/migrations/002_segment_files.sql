-- v2: segments record their file (relative to the data dir) and whether they are sealed (no
-- longer written; every segment but the newest).
ALTER TABLE segments ADD COLUMN path TEXT NOT NULL DEFAULT '';
ALTER TABLE segments ADD COLUMN sealed INTEGER NOT NULL DEFAULT 0;
UPDATE segments SET path = printf('segments/seg-%08d.gseg', segment_id);
UPDATE segments SET sealed = 1 WHERE segment_id < (SELECT MAX(segment_id) FROM segments);
