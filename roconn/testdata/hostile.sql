-- Hostile statements for shop.sql (shaped like the demo database). Each record starts with a line
-- "-- name: CATEGORY/NAME"; the statement is everything up to the next such
-- line. The category says which layers must stop it (see corpus_test.go):
--   write, stacked, hidden, pragma, attach, function: the guard alone, roconn alone, and the whole path;
--   write also on a mode=ro connection with no authorizer;
--   schema, private, dos, memory: roconn alone and the whole path (the guard cannot know the policy or the cost).
-- name: write/insert
INSERT INTO orders (customer_id, channel, day, status, total) VALUES (1, 'online', '2025-01-01', 'shipped', 1)
-- name: write/insert-select
INSERT INTO regions (name) SELECT name || 'x' FROM regions
-- name: write/insert-or-replace
INSERT OR REPLACE INTO regions (id, name) VALUES (1, 'pwned')
-- name: write/replace-into
REPLACE INTO regions (id, name) VALUES (1, 'pwned')
-- name: write/upsert
INSERT INTO regions (id, name) VALUES (1, 'west') ON CONFLICT(id) DO UPDATE SET name = 'pwned'
-- name: write/update
UPDATE products SET price = 0
-- name: write/update-from
UPDATE orders SET total = 0 FROM order_lines WHERE order_lines.order_id = orders.id
-- name: write/update-returning
UPDATE products SET price = price * 2 RETURNING id, price
-- name: write/delete
DELETE FROM orders
-- name: write/delete-where
DELETE FROM orders WHERE id = 1
-- name: write/delete-returning
DELETE FROM order_lines RETURNING *
-- name: write/delete-lowercase
delete from orders where status = 'canceled'
-- name: write/with-delete
WITH doomed AS (SELECT id FROM orders WHERE status = 'canceled') DELETE FROM orders WHERE id IN (SELECT id FROM doomed)
-- name: write/with-insert
WITH x AS (SELECT 1) INSERT INTO regions (name) SELECT 'evil' FROM x
-- name: write/with-update
WITH x(v) AS (VALUES (0)) UPDATE products SET price = (SELECT v FROM x)
-- name: write/create-table
CREATE TABLE stolen AS SELECT * FROM customers
-- name: write/create-temp-table
CREATE TEMP TABLE t AS SELECT email FROM customers
-- name: write/create-index
CREATE INDEX idx_evil ON orders(day)
-- name: write/create-view
CREATE VIEW leak AS SELECT email, phone FROM customers
-- name: write/create-trigger
CREATE TRIGGER wipe AFTER INSERT ON regions BEGIN DELETE FROM orders; END
-- name: write/create-virtual-table
CREATE VIRTUAL TABLE v USING fts5(x)
-- name: write/drop-table
DROP TABLE orders
-- name: write/drop-table-if-exists
DROP TABLE IF EXISTS order_lines
-- name: write/drop-view
DROP VIEW customer_regions
-- name: write/drop-index
DROP INDEX IF EXISTS sqlite_autoindex_regions_1
-- name: write/alter-rename
ALTER TABLE orders RENAME TO orders_old
-- name: write/alter-add-column
ALTER TABLE customers ADD COLUMN pwned TEXT
-- name: write/alter-drop-column
ALTER TABLE customers DROP COLUMN phone
-- name: write/alter-rename-column
ALTER TABLE customers RENAME COLUMN email TO region
-- name: write/vacuum
VACUUM
-- name: write/vacuum-into
VACUUM INTO '/tmp/sqlbot-stolen.db'
-- name: write/reindex
REINDEX
-- name: write/analyze
ANALYZE
-- name: write/begin
BEGIN IMMEDIATE
-- name: write/begin-exclusive
BEGIN EXCLUSIVE TRANSACTION
-- name: write/commit
COMMIT
-- name: write/rollback
ROLLBACK
-- name: write/savepoint
SAVEPOINT s1
-- name: write/release
RELEASE s1
-- name: stacked/select-delete
SELECT 1; DELETE FROM orders
-- name: stacked/select-delete-newline
SELECT count(*) FROM orders;
DELETE FROM orders;
-- name: stacked/select-drop
SELECT 1;DROP TABLE orders
-- name: stacked/select-update-trailing
SELECT id FROM regions; UPDATE products SET price = 0;
-- name: stacked/string-with-semicolon
SELECT 'a;b' AS s; DELETE FROM orders
-- name: stacked/quoted-name-with-semicolon
SELECT 1 AS "x;y"; DELETE FROM orders
-- name: stacked/comment-between
SELECT 1; /* harmless */ DELETE FROM orders
-- name: stacked/line-comment-between
SELECT 1; -- harmless
DELETE FROM orders
-- name: stacked/two-selects
SELECT 1; SELECT 2
-- name: stacked/select-attach
SELECT 1; ATTACH DATABASE '/tmp/sqlbot-x.db' AS x
-- name: stacked/select-pragma
SELECT 1; PRAGMA writable_schema = 1
-- name: stacked/with-then-delete
WITH x AS (SELECT 1) SELECT * FROM x; DELETE FROM orders
-- name: stacked/select-vacuum
SELECT 1; VACUUM INTO '/tmp/sqlbot-v.db'
-- name: stacked/empty-then-delete
SELECT 1;; DELETE FROM orders
-- name: stacked/select-begin
SELECT 1; BEGIN; DELETE FROM orders; COMMIT
-- name: hidden/block-comment-prefix
/* SELECT */ DELETE FROM orders
-- name: hidden/line-comment-prefix
-- SELECT everything
DELETE FROM orders
-- name: hidden/comment-inside-keyword-gap
SELECT 1 /* ; */ ; DELETE FROM orders
-- name: hidden/empty-comment-glue
/**/DELETE/**/FROM/**/orders
-- name: hidden/comment-after-dashdash
SELECT 1 --
; DELETE FROM orders
-- name: hidden/unterminated-block
SELECT 1 /* DELETE FROM orders
-- name: hidden/unterminated-string
SELECT 'abc FROM orders; DELETE FROM orders
-- name: hidden/unterminated-quoted-name
SELECT "abc FROM orders; DELETE FROM orders
-- name: hidden/unterminated-bracket
SELECT [abc FROM orders; DELETE FROM orders
-- name: hidden/mixed-case
DeLeTe FrOm orders
-- name: hidden/leading-whitespace
   
	 DELETE FROM orders
-- name: hidden/select-in-string-then-delete
DELETE FROM orders WHERE note = 'SELECT'
-- name: hidden/nested-comment-trick
/* /* */ DELETE FROM orders /* */
-- name: hidden/explain-delete
EXPLAIN DELETE FROM orders
-- name: hidden/explain-query-plan
EXPLAIN QUERY PLAN SELECT * FROM orders
-- name: hidden/with-recursive-delete
WITH RECURSIVE r(n) AS (SELECT 1) DELETE FROM orders
-- name: hidden/unicode-space-prefix
 DELETE FROM orders
-- name: hidden/bidi-override
SELECT id FROM orders WHERE status = 'shipped' /* ‮ */ UNION SELECT email FROM customers
-- name: hidden/bidi-isolate-string
SELECT note FROM orders WHERE note = '⁦' UNION SELECT phone FROM customers
-- name: pragma/table-info
PRAGMA table_info(customers)
-- name: pragma/writable-schema
PRAGMA writable_schema = ON
-- name: pragma/journal-mode
PRAGMA journal_mode = OFF
-- name: pragma/foreign-keys
PRAGMA foreign_keys = OFF
-- name: pragma/query-only
PRAGMA query_only = 0
-- name: pragma/user-version
PRAGMA user_version = 42
-- name: pragma/database-list
PRAGMA database_list
-- name: pragma/function-table-info
SELECT * FROM pragma_table_info('customers')
-- name: pragma/function-table-xinfo
SELECT name FROM pragma_table_xinfo('employees')
-- name: pragma/function-database-list
SELECT file FROM pragma_database_list
-- name: pragma/function-compile-options
SELECT * FROM pragma_compile_options
-- name: pragma/function-function-list
SELECT name FROM pragma_function_list
-- name: pragma/function-index-list
SELECT * FROM pragma_index_list('orders')
-- name: pragma/function-table-list
SELECT name FROM pragma_table_list
-- name: pragma/function-join
SELECT r.name, p.name FROM regions r JOIN pragma_table_info('employees') p
-- name: attach/attach-file
ATTACH DATABASE '/tmp/sqlbot-attach.db' AS evil
-- name: attach/attach-memory
ATTACH ':memory:' AS m
-- name: attach/attach-self
ATTACH DATABASE 'file:demo.db?mode=rw' AS rw
-- name: attach/detach
DETACH DATABASE main
-- name: attach/vacuum-into-main
VACUUM main INTO '/tmp/sqlbot-copy.db'
-- name: function/load-extension
SELECT load_extension('/tmp/evil.so')
-- name: function/load-extension-spaced
SELECT load_extension ('/tmp/evil.so', 'init')
-- name: function/load-extension-comment
SELECT load_extension/**/('/tmp/evil.so')
-- name: function/readfile
SELECT readfile('/etc/passwd')
-- name: function/writefile
SELECT writefile('/tmp/sqlbot-owned', 'x')
-- name: function/edit
SELECT edit('x', 'vi')
-- name: function/fts3-tokenizer
SELECT fts3_tokenizer('simple')
-- name: function/randomblob
SELECT randomblob(1000000000)
-- name: function/zeroblob
SELECT zeroblob(2000000000)
-- name: function/zeroblob-length
SELECT length(zeroblob(1000000))
-- name: function/sqlite-version
SELECT sqlite_version()
-- name: function/sqlite-source-id
SELECT sqlite_source_id()
-- name: function/sqlite-compileoption
SELECT sqlite_compileoption_used('ENABLE_LOAD_EXTENSION')
-- name: function/sqlite-offset
SELECT sqlite_offset(id) FROM orders LIMIT 1
-- name: function/uppercase
SELECT LOAD_EXTENSION('x')
-- name: schema/sqlite-master
SELECT sql FROM sqlite_master
-- name: schema/sqlite-schema
SELECT name, sql FROM sqlite_schema WHERE type = 'table'
-- name: schema/sqlite-temp-master
SELECT * FROM sqlite_temp_master
-- name: schema/main-qualified
SELECT sql FROM main.sqlite_master WHERE name = 'customers'
-- name: schema/subquery
SELECT (SELECT sql FROM sqlite_master WHERE name = 'employees') AS s
-- name: schema/cte
WITH s AS (SELECT * FROM sqlite_schema) SELECT * FROM s
-- name: schema/join
SELECT r.name, m.name FROM regions r, sqlite_master m
-- name: schema/quoted
SELECT "sql" FROM "sqlite_master"
-- name: schema/sqlite-sequence
SELECT * FROM sqlite_sequence
-- name: schema/dbstat
SELECT * FROM dbstat
-- name: schema/exists-oracle
SELECT 1 FROM regions WHERE EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'customers')
-- name: private/email-direct
SELECT email FROM customers
-- name: private/phone-direct
SELECT phone FROM customers WHERE id = 1
-- name: private/names-direct
SELECT first_name, last_name FROM customers
-- name: private/star
SELECT * FROM customers
-- name: private/star-qualified
SELECT c.* FROM customers c
-- name: private/rowid-star
SELECT rowid, * FROM customers
-- name: private/quoted-column
SELECT "email" FROM "customers"
-- name: private/bracket-column
SELECT [phone] FROM [customers]
-- name: private/main-qualified
SELECT email FROM main.customers
-- name: private/subquery-scalar
SELECT (SELECT email FROM customers LIMIT 1) AS x
-- name: private/subquery-from
SELECT x FROM (SELECT email AS x FROM customers)
-- name: private/in-subquery
SELECT id FROM customer_regions WHERE id IN (SELECT id FROM customers WHERE email LIKE 'a%')
-- name: private/cte-named-like-view
WITH customer_regions AS (SELECT id, email AS region FROM customers) SELECT * FROM customer_regions
-- name: private/cte-named-like-staff
WITH staff AS (SELECT id, salary FROM employees) SELECT * FROM staff
-- name: private/cte-plain
WITH c AS (SELECT phone FROM customers) SELECT * FROM c
-- name: private/join
SELECT o.id, c.email FROM orders o JOIN customers c ON c.id = o.customer_id
-- name: private/join-using-view
SELECT cr.region, c.phone FROM customer_regions cr JOIN customers c USING (id)
-- name: private/join-staff-employees
SELECT s.first_name, e.salary FROM staff s JOIN employees e ON e.id = s.id
-- name: private/json-object
SELECT json_object('e', email, 'p', phone) FROM customers
-- name: private/json-group-array
SELECT json_group_array(email) FROM customers
-- name: private/json-array
SELECT json_array(first_name, last_name) FROM customers
-- name: private/group-concat
SELECT group_concat(email, ',') FROM customers
-- name: private/union
SELECT region FROM customer_regions UNION SELECT email FROM customers
-- name: private/union-all-salary
SELECT title FROM staff UNION ALL SELECT salary FROM employees
-- name: private/where-oracle
SELECT count(*) FROM customers WHERE email LIKE 'a%'
-- name: private/order-by-oracle
SELECT id FROM customers ORDER BY phone
-- name: private/salary-aggregate
SELECT max(salary), avg(salary) FROM employees
-- name: private/salary-where
SELECT id FROM staff WHERE id IN (SELECT id FROM employees WHERE salary > 100000)
-- name: private/employee-email
SELECT email FROM employees
-- name: private/employee-star
SELECT * FROM employees
-- name: private/length
SELECT length(phone) FROM customers
-- name: private/hex
SELECT hex(email) FROM customers
-- name: private/substr
SELECT substr(email, 1, 3) FROM customers
-- name: private/case
SELECT CASE WHEN email LIKE '%@example.com' THEN 1 ELSE 0 END FROM customers
-- name: private/window
SELECT lag(email) OVER (ORDER BY id) FROM customers
-- name: private/exists
SELECT id FROM customer_regions cr WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = cr.id AND c.phone IS NOT NULL)
-- name: private/recursive-cte
WITH RECURSIVE r(n, e) AS (SELECT 1, (SELECT email FROM customers WHERE id = 1) UNION ALL SELECT n + 1, e FROM r WHERE n < 3) SELECT * FROM r
-- name: private/having
SELECT region_id FROM customers GROUP BY region_id HAVING max(email) > ''
-- name: private/group-by
SELECT last_name, count(*) FROM customers GROUP BY last_name
-- name: private/values-join
SELECT v.column1, c.email FROM (VALUES (1)) v JOIN customers c ON c.id = v.column1
-- name: private/printf
SELECT printf('%s <%s>', first_name, email) FROM customers
-- name: private/coalesce
SELECT coalesce(phone, email) FROM customers
-- name: private/alias-as-allowed-name
SELECT email AS region FROM customers
-- name: dos/recursive-infinite
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c
-- name: dos/recursive-huge
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT max(x) FROM c
-- name: dos/cartesian-3
SELECT count(*) FROM order_lines a, order_lines b, order_lines c
-- name: dos/cartesian-cross-join
SELECT count(*) FROM orders a CROSS JOIN orders b CROSS JOIN order_lines c
-- name: dos/cartesian-sum
SELECT sum(a.qty * b.qty * c.qty) FROM order_lines a JOIN order_lines b JOIN order_lines c
-- name: dos/recursive-two-branches
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c UNION ALL SELECT x + 2 FROM c) SELECT count(*) FROM c
-- name: dos/correlated-cartesian
SELECT count(*) FROM order_lines a WHERE (SELECT count(*) FROM order_lines b, order_lines c WHERE b.qty = a.qty) > 0
-- name: dos/order-by-cartesian
SELECT a.id FROM order_lines a, order_lines b ORDER BY a.line_total * b.line_total DESC LIMIT 1
-- name: dos/recursive-limit-huge
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100000000000) SELECT sum(x) FROM c
-- name: dos/like-cartesian
SELECT count(*) FROM orders a, orders b WHERE a.day || b.day LIKE '%9%9%9%9%9%'
-- name: memory/printf-huge
SELECT printf('%.*c', 2000000000, 'x')
-- name: memory/printf-width
SELECT printf('%2000000d', 1)
-- name: memory/printf-over-limit
SELECT length(printf('%.*c', 2000000, 'x'))
-- name: memory/replace-grow
SELECT length(replace(printf('%.*c', 500000, 'x'), 'x', 'xxxxxxxxxx'))
-- name: memory/group-concat-cartesian
SELECT length(group_concat(a.sku || b.sku)) FROM products a, products b, products c
-- name: memory/group-concat-lines
SELECT length(group_concat(printf('%.*c', 200, 'x'))) FROM order_lines
-- name: memory/recursive-doubling
WITH RECURSIVE s(x, n) AS (SELECT 'x', 1 UNION ALL SELECT x || x, n + 1 FROM s WHERE n < 40) SELECT length(x) FROM s ORDER BY n DESC LIMIT 1
-- name: memory/upper-huge
SELECT upper(printf('%.*c', 3000000, 'a'))
-- name: memory/hex-huge
SELECT length(hex(printf('%.*c', 700000, 'a')))
-- name: memory/concat-huge
SELECT length(concat(printf('%.*c', 600000, 'a'), printf('%.*c', 600000, 'b')))
-- name: memory/json-group-array-cartesian
SELECT length(json_group_array(a.name || b.name)) FROM products a, products b, order_lines c
