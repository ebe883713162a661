-- Writes on the fixture database (fixture.sql). Each record starts with a line
-- "-- name: LAYER/NAME"; the statement is everything up to the next such line.
-- LAYER is the layer that refuses the statement when it comes through
-- DB.Query (roconn_test.go): a trigger's body needs ';', so to Query's scanner
-- a CREATE TRIGGER is two statements, refused before SQLite sees it. Each statement is also driven at the authorizer
-- alone and at the check of the compiled program alone (layers_internal_test.go):
-- each layer must refuse every one on its own. Every "/tmp/" is redirected into
-- a directory the test watches.
-- name: authorizer/insert
INSERT INTO orders(id, customer_id, day, status, total) VALUES (99, 1, '2024-01-01', 'x', 1)
-- name: authorizer/insert-select-returning
INSERT INTO orders SELECT * FROM orders RETURNING id
-- name: authorizer/insert-select-new-ids
INSERT INTO orders SELECT id + 100, customer_id, day, status, total, note, receipt FROM orders RETURNING id
-- name: authorizer/update
UPDATE orders SET total = 0
-- name: authorizer/delete
DELETE FROM orders
-- name: authorizer/replace
REPLACE INTO orders(id, customer_id, day, status, total) VALUES (1, 1, 'd', 's', 0)
-- name: authorizer/upsert-private
INSERT INTO secrets VALUES (3, 'x') ON CONFLICT DO NOTHING
-- name: authorizer/create-table
CREATE TABLE x(a)
-- name: authorizer/create-temp-table
CREATE TEMP TABLE x(a)
-- name: authorizer/create-table-as
CREATE TABLE x AS SELECT * FROM orders
-- name: authorizer/create-index
CREATE INDEX i ON orders(status)
-- name: authorizer/create-view
CREATE VIEW v AS SELECT 1
-- name: authorizer/create-virtual-table
CREATE VIRTUAL TABLE v USING fts5(a)
-- name: authorizer/drop-table
DROP TABLE orders
-- name: authorizer/drop-private-table
DROP TABLE secrets
-- name: authorizer/drop-index
DROP INDEX orders_day
-- name: authorizer/drop-view
DROP VIEW customer_regions
-- name: authorizer/alter-add-column
ALTER TABLE orders ADD COLUMN x
-- name: authorizer/alter-rename
ALTER TABLE orders RENAME TO o2
-- name: authorizer/attach-file
ATTACH '/tmp/other.db' AS o
-- name: authorizer/attach-memory
ATTACH ':memory:' AS m
-- name: authorizer/detach
DETACH o
-- name: authorizer/detach-main
DETACH main
-- name: authorizer/pragma-user-version
PRAGMA user_version = 7
-- name: authorizer/pragma-journal-mode
PRAGMA journal_mode = WAL
-- name: authorizer/pragma-writable-schema
PRAGMA writable_schema = ON
-- name: authorizer/pragma-query-only
PRAGMA query_only = OFF
-- name: authorizer/reindex
REINDEX
-- name: authorizer/reindex-index
REINDEX orders_day
-- name: authorizer/analyze
ANALYZE
-- name: authorizer/begin-immediate
BEGIN IMMEDIATE
-- name: authorizer/commit
COMMIT
-- name: authorizer/savepoint
SAVEPOINT s
-- name: readonly/create-trigger
CREATE TRIGGER tr AFTER INSERT ON orders BEGIN DELETE FROM orders; END
-- name: readonly/create-trigger-semicolon
CREATE TRIGGER tr AFTER INSERT ON orders BEGIN DELETE FROM orders; END;
-- name: readonly/vacuum
VACUUM
-- name: readonly/vacuum-into
VACUUM INTO '/tmp/copy.db'
