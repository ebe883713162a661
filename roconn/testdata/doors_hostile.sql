-- Reads around the policy of doors.sql (doors_policy.yaml). Each record
-- starts with a line "-- name: CATEGORY/NAME"; the statement runs up to the
-- next such line. Every statement compiles on a plain connection, and each
-- must be refused by the authorizer alone, by the check of the compiled
-- program alone, and on the whole path (guard, then roconn), with no private
-- value in any output (see doors_internal_test.go and doors_test.go).
-- name: join/inner-on-base
SELECT e.salary FROM departments d JOIN employees e ON e.dept_id = d.id
-- name: join/left-on-base
SELECT d.name, e.email FROM departments d LEFT JOIN employees e ON e.dept_id = d.id
-- name: join/right-on-base
SELECT d.name, e.salary FROM employees e RIGHT JOIN departments d ON e.dept_id = d.id
-- name: join/full-on-base
SELECT d.name, e.name FROM employees e FULL JOIN departments d ON e.dept_id = d.id
-- name: join/cross-base
SELECT d.name, e.salary FROM departments d CROSS JOIN employees e
-- name: join/comma-base
SELECT d.name, r.comment FROM departments d, reviews r
-- name: join/natural-base
SELECT count(*) FROM employees NATURAL JOIN (SELECT 'west' AS region)
-- name: join/natural-hidden-column
SELECT a.id FROM accounts a NATURAL JOIN (SELECT 'PIN-SECRET-7731' AS pin)
-- name: join/natural-hidden-vs-table
SELECT count(*) FROM accounts NATURAL JOIN (SELECT 'XQ12SECRET0001' AS iban, 1 AS id)
-- name: join/using-base-count
SELECT count(*) FROM employees JOIN (SELECT 9100011 AS salary) USING (salary)
-- name: join/using-hidden-count
SELECT count(*) FROM accounts JOIN (SELECT 'PIN-SECRET-7731' AS pin) USING (pin)
-- name: join/using-hidden-ids
SELECT id FROM accounts JOIN (SELECT 'Owner SECRET Gus' AS owner) USING (owner)
-- name: join/left-using-hidden
SELECT accounts.id FROM accounts LEFT JOIN (SELECT 'PIN-SECRET-1204' AS pin, 1 AS hit) p USING (pin) WHERE p.hit = 1
-- name: join/full-using-coalesce-hidden
SELECT id, owner, iban FROM accounts FULL JOIN (SELECT NULL AS owner, NULL AS iban WHERE 0) USING (owner, iban)
-- name: join/right-using-coalesce-hidden
SELECT pin FROM (SELECT NULL AS pin WHERE 0) RIGHT JOIN accounts USING (pin)
-- name: join/full-using-coalesce-base
SELECT id, email FROM employees FULL JOIN (SELECT NULL AS email WHERE 0) USING (email)
-- name: join/using-oracle-candidates
WITH RECURSIVE n(i) AS (SELECT 9100000 UNION ALL SELECT i + 1 FROM n WHERE i < 9100100) SELECT n.i FROM n JOIN employees ON employees.salary = n.i
-- name: join/using-oracle-generated
WITH RECURSIVE c(salary) AS (SELECT 9100000 UNION ALL SELECT salary + 1 FROM c WHERE salary < 9100100) SELECT salary FROM c JOIN employees USING (salary)
-- name: join/natural-oracle-generated
WITH RECURSIVE c(pin) AS (SELECT 'PIN-SECRET-7730' UNION ALL SELECT 'PIN-SECRET-7731') SELECT count(*) FROM accounts NATURAL JOIN c
-- name: join/using-view-and-base
SELECT w.name FROM west_staff w JOIN employees USING (id)
-- name: join/hidden-on-visible
SELECT a.id, d.name FROM accounts a JOIN departments d ON d.name = a.owner
-- name: join/self-join-hidden
SELECT a.id, b.id FROM accounts a JOIN accounts b ON a.pin < b.pin
-- name: view/aggregate-base
SELECT salary FROM employees
-- name: view/aggregate-base-where
SELECT dept_id FROM employees WHERE salary > 9100040
-- name: view/aggregate-max
SELECT max(salary), min(salary) FROM employees
-- name: view/aggregate-group
SELECT dept_id, group_concat(salary) FROM employees GROUP BY dept_id
-- name: view/row-filter-base
SELECT id, name FROM employees
-- name: view/row-filter-other-rows
SELECT name FROM employees WHERE region <> 'west'
-- name: view/window-base
SELECT id, salary, rank() OVER (ORDER BY salary) FROM employees
-- name: view/window-frame
SELECT id, sum(salary) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND CURRENT ROW) FROM employees
-- name: view/over-hidden-view
SELECT email FROM staff_all
-- name: view/over-hidden-view-star
SELECT * FROM staff_all
-- name: view/over-hidden-view-count
SELECT count(*) FROM staff_all WHERE region = 'east'
-- name: view/computed-base
SELECT email FROM employees WHERE id = 1
-- name: view/computed-substr
SELECT substr(email, 1, instr(email, '@') - 1) FROM employees
-- name: view/joined-hidden-table
SELECT comment FROM reviews
-- name: view/joined-hidden-table-join
SELECT s.score, r.comment FROM review_scores s JOIN reviews r ON r.employee_id = s.employee_id
-- name: view/view-join-base
SELECT d.avg_salary, e.salary FROM dept_pay d JOIN employees e ON e.dept_id = d.dept_id
-- name: view/exists-base
SELECT id FROM staff_dir s WHERE EXISTS (SELECT 1 FROM employees e WHERE e.id = s.id AND e.salary > 9100040)
-- name: view/in-subquery-base
SELECT id FROM west_staff WHERE id IN (SELECT id FROM employees WHERE email LIKE 'a%')
-- name: view/scalar-subquery-base
SELECT (SELECT salary FROM employees WHERE id = 1) AS s
-- name: view/union-base
SELECT name FROM west_staff UNION SELECT name FROM employees
-- name: view/internal-cte-base
SELECT id, salary FROM employees WHERE salary > 9100050
-- name: count/base
SELECT count(*) FROM employees
-- name: count/hidden-table
SELECT count(*) FROM reviews
-- name: count/base-in-subquery
SELECT (SELECT count(*) FROM employees) AS n
-- name: count/base-where
SELECT count(*) FROM employees WHERE region = 'east'
-- name: count/one-from-base
SELECT 1 FROM employees
-- name: count/exists-base
SELECT 1 WHERE EXISTS (SELECT 1 FROM reviews)
-- name: index/indexed-by-hidden
SELECT id FROM accounts INDEXED BY accounts_iban
-- name: index/indexed-by-hidden-range
SELECT id FROM accounts INDEXED BY accounts_opened_pin WHERE opened > ''
-- name: index/indexed-by-expression
SELECT id FROM accounts INDEXED BY accounts_lower_owner WHERE lower(owner) > ''
-- name: index/indexed-by-base
SELECT id FROM employees INDEXED BY employees_salary
-- name: index/indexed-by-base-range
SELECT id FROM employees INDEXED BY employees_salary WHERE salary > 0
-- name: schema/sqlite-schema
SELECT sql FROM sqlite_schema
-- name: schema/sqlite-master-join
SELECT d.name, m.name FROM departments d, sqlite_master m
-- name: schema/dbpage
SELECT data FROM sqlite_dbpage
-- name: schema/dbpage-count
SELECT count(*) FROM sqlite_dbpage
-- name: schema/dbstat
SELECT name FROM dbstat
-- name: schema/pragma-table-info
SELECT name FROM pragma_table_info('employees')
-- name: schema/exists-oracle
SELECT 1 FROM departments WHERE EXISTS (SELECT 1 FROM sqlite_schema WHERE sql LIKE '%salary%')
-- name: cte/named-like-view
WITH dept_pay AS (SELECT dept_id, salary AS avg_salary, 1 AS headcount FROM employees) SELECT * FROM dept_pay
-- name: cte/named-like-row-filter
WITH west_staff AS (SELECT id, name, dept_id FROM employees) SELECT * FROM west_staff
-- name: cte/named-like-hidden-view
WITH staff_all AS (SELECT id, name, dept_id, region, email, salary FROM employees) SELECT email FROM staff_all
-- name: cte/named-like-view-internal-cte
WITH s AS (SELECT id, dept_id, salary FROM employees) SELECT salary FROM s
-- name: cte/named-like-view-columns
WITH salary_rank(id, dept_id, pay_rank) AS (SELECT id, dept_id, salary FROM employees) SELECT * FROM salary_rank
-- name: cte/materialized-named-like-view
WITH email_domains AS MATERIALIZED (SELECT id, email AS domain FROM employees) SELECT * FROM email_domains
-- name: cte/quoted-name
WITH "West_Staff" AS (SELECT id, name, dept_id FROM employees) SELECT * FROM "West_Staff"
-- name: cte/string-name
WITH 'senior' AS (SELECT id, dept_id FROM employees) SELECT * FROM senior
-- name: cte/nested
SELECT * FROM (WITH review_scores AS (SELECT employee_id, 1 AS dept_id, comment AS score FROM reviews) SELECT * FROM review_scores)
-- name: cte/plain-base
WITH e AS (SELECT * FROM employees) SELECT email FROM e
-- name: cte/recursive-base
WITH RECURSIVE r(n, s) AS (SELECT 1, (SELECT salary FROM employees WHERE id = 1) UNION ALL SELECT n + 1, s FROM r WHERE n < 2) SELECT s FROM r
-- name: hide/direct
SELECT owner FROM accounts
-- name: hide/star
SELECT * FROM accounts
-- name: hide/qualified-star
SELECT a.* FROM accounts a
-- name: hide/where
SELECT id FROM accounts WHERE pin = 'PIN-SECRET-7731'
-- name: hide/order-by
SELECT id FROM accounts ORDER BY pin
-- name: hide/order-by-nulls-first
SELECT id FROM accounts ORDER BY iban DESC NULLS FIRST
-- name: hide/group-by
SELECT count(*) FROM accounts GROUP BY owner
-- name: hide/having
SELECT kind FROM accounts GROUP BY kind HAVING max(pin) > 'PIN-SECRET-5'
-- name: hide/length
SELECT length(iban) FROM accounts
-- name: hide/typeof
SELECT typeof(pin) FROM accounts
-- name: hide/generated-virtual
SELECT initial FROM accounts
-- name: hide/generated-stored
SELECT country FROM accounts
-- name: hide/json-object
SELECT json_object('o', owner) FROM accounts
-- name: hide/json-group-array
SELECT json_group_array(iban) FROM accounts
-- name: hide/group-concat
SELECT group_concat(pin, ',') FROM accounts
-- name: hide/window
SELECT lag(owner) OVER (ORDER BY id) FROM accounts
-- name: hide/window-frame-order
SELECT id, row_number() OVER (ORDER BY pin) FROM accounts
-- name: hide/in-subquery
SELECT id FROM accounts WHERE id IN (SELECT id FROM accounts WHERE iban LIKE 'XQ%')
-- name: hide/exists
SELECT id FROM departments d WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.dept_id = d.id AND a.pin LIKE 'PIN-SECRET-7%')
-- name: hide/compound
SELECT kind FROM accounts UNION SELECT owner FROM accounts
-- name: hide/values
SELECT v.column1 FROM (VALUES ('PIN-SECRET-7731')) v JOIN accounts a ON a.pin = v.column1
-- name: hide/limit-offset-oracle
SELECT id FROM accounts LIMIT 1 OFFSET (SELECT count(*) FROM accounts WHERE pin < 'PIN-SECRET-5')
-- name: hide/likelihood
SELECT id FROM accounts WHERE likelihood(owner LIKE 'Owner SECRET G%', 0.5)
-- name: hide/unlikely
SELECT id FROM accounts WHERE unlikely(iban GLOB 'XQ*')
-- name: hide/collate
SELECT id FROM accounts ORDER BY owner COLLATE NOCASE
-- name: hide/cast-error
SELECT CAST(pin AS INTEGER) FROM accounts
-- name: hide/json-error
SELECT json_extract('{}', '$.' || pin) FROM accounts
-- name: hide/json-path-error
SELECT json_extract('{}', iban) FROM accounts
-- name: hide/case
SELECT CASE WHEN substr(pin, 12, 1) = '7' THEN 1 ELSE 0 END FROM accounts
-- name: hide/main-qualified
SELECT main.accounts.owner FROM main.accounts
-- name: hide/subquery-alias-star
SELECT x.* FROM (SELECT * FROM accounts) x
-- name: hide/rowid-and-hidden
SELECT rowid, owner FROM accounts
-- name: hide/manager-email
SELECT manager_email FROM accounts WHERE manager_email IS NOT NULL
-- name: hide/not-indexed
SELECT id FROM accounts NOT INDEXED WHERE owner > ''
-- name: hide/recursive
WITH RECURSIVE r(n, p) AS (SELECT 1, (SELECT pin FROM accounts WHERE id = 1) UNION ALL SELECT n + 1, p FROM r WHERE n < 2) SELECT p FROM r
-- name: redteam/natural-self-join
SELECT count(*) FROM accounts a NATURAL JOIN accounts b
-- name: redteam/natural-self-join-parenthesized
SELECT count(*) FROM accounts NATURAL JOIN (accounts)
-- name: redteam/natural-self-join-main
SELECT count(*) FROM accounts a NATURAL JOIN main.accounts b
-- name: redteam/returning
UPDATE accounts SET balance = balance RETURNING pin
-- name: redteam/delete-returning
DELETE FROM accounts WHERE 0 RETURNING owner
-- name: redteam/json-each-over-hidden
SELECT value FROM json_each((SELECT json_group_array(pin) FROM accounts))
-- name: redteam/json-group-object-base
SELECT json_group_object(name, salary) FROM employees
-- name: redteam/rowid-names-of-base
SELECT _rowid_, oid FROM employees
-- name: redteam/order-by-hidden-limit
SELECT id FROM accounts ORDER BY pin LIMIT 1
-- name: redteam/group-concat-order-by-hidden
SELECT group_concat(id ORDER BY pin) FROM accounts
-- name: redteam/count-distinct-hidden
SELECT count(DISTINCT pin) FROM accounts
-- name: redteam/aggregate-filter-hidden
SELECT count(*) FILTER (WHERE pin > 'PIN-SECRET-5') FROM accounts
-- name: redteam/null-ness
SELECT id FROM accounts WHERE owner IS NULL
-- name: redteam/iif
SELECT iif(pin > 'PIN-SECRET-5', 1, 0) FROM accounts
-- name: redteam/instr-hex-quote
SELECT instr(pin, '7'), hex(iban), quote(owner) FROM accounts
-- name: redteam/printf
SELECT printf('%s', iban) FROM accounts
-- name: redteam/offset-subquery
SELECT (SELECT pin FROM accounts LIMIT 1 OFFSET 2)
-- name: redteam/limit-from-hidden
SELECT id FROM accounts LIMIT (SELECT length(pin) FROM accounts LIMIT 1)
-- name: redteam/ntile-base
SELECT ntile(2) OVER (ORDER BY salary) FROM employees
-- name: redteam/view-join-using-base
SELECT * FROM dept_pay JOIN employees USING (dept_id)
-- name: redteam/max-through-hidden-view
SELECT max(salary) FROM staff_all
-- name: redteam/window-over-hidden-view
SELECT id, lag(salary) OVER (ORDER BY id) FROM staff_all
-- name: redteam/values-in
SELECT id FROM accounts WHERE pin IN (VALUES ('PIN-SECRET-7731'), ('PIN-SECRET-0042'))
-- name: redteam/compound-order-by-hidden
SELECT id FROM accounts UNION ALL SELECT id FROM departments ORDER BY 1 LIMIT (SELECT count(*) FROM accounts WHERE pin LIKE '%7%')
-- name: redteam/correlated-exists-hidden
SELECT d.id FROM departments d WHERE EXISTS (SELECT 1 FROM accounts a WHERE a.dept_id = d.id AND a.iban GLOB 'X*')
-- name: redteam/cte-borrows-row-filter-with-rows
WITH west_staff(id, name, dept_id) AS (SELECT id, name, dept_id FROM employees WHERE region = 'east') SELECT name FROM west_staff
-- name: redteam/count-main-qualified-base
SELECT count(*) FROM main.employees
-- name: redteam/count-quoted-main-base
SELECT count(*) FROM "main"."reviews"
-- name: redteam/count-hidden-view
SELECT count(*) FROM staff_all
-- name: redteam/count-base-beside-view
SELECT count(*) FROM staff_dir, employees
-- name: redteam/indexed-by-autoindex
SELECT id FROM employees INDEXED BY sqlite_autoindex_employees_1 WHERE email > ''
-- name: redteam/using-hidden-quoted
SELECT count(*) FROM accounts JOIN (SELECT 'XQ12SECRET0001' AS "iban") USING ("iban")
-- name: redteam/using-hidden-commented
SELECT count(*) FROM accounts JOIN (SELECT 'XQ12SECRET0001' AS iban) USING (/* x */ iban)
-- name: redteam/manager-email-join
SELECT a.id FROM accounts a JOIN email_domains e ON e.id = a.id WHERE a.manager_email LIKE '%'
-- name: cte/subquery-alias-named-like-view
SELECT name FROM (SELECT id, name, dept_id FROM employees) AS west_staff
-- name: cte/table-alias-named-like-view
SELECT dept_pay.salary FROM employees AS dept_pay
-- name: schemajoin/using-schema-name-oracle
SELECT count(*) FROM (SELECT char(101, 109, 112, 108, 111, 121, 101, 101, 115) AS name) JOIN sqlite_schema USING (name)
-- name: schemajoin/natural-master-name-oracle
SELECT count(*) FROM (SELECT 'emp' || 'loyees' AS name) NATURAL JOIN sqlite_master
-- name: schemajoin/natural-dbpage-page-count
WITH RECURSIVE p(pgno) AS (SELECT 1 UNION ALL SELECT pgno + 1 FROM p WHERE pgno < 100) SELECT count(*) FROM p NATURAL JOIN sqlite_dbpage
-- name: schemajoin/using-dbpage-table-valued
SELECT count(*) FROM (SELECT 2 AS pgno) NATURAL JOIN sqlite_dbpage('main')
-- name: schemajoin/using-dbpage
SELECT count(*) FROM (SELECT 12 AS pgno) JOIN sqlite_dbpage USING (pgno)
-- name: schemajoin/inner-using-quoted-master
SELECT count(*) FROM (SELECT 'departments' AS name) INNER JOIN "sqlite_master" USING (name)
-- name: schemajoin/using-bracket-schema
SELECT count(*) FROM (SELECT 'accounts_iban' AS name) JOIN [sqlite_schema] USING ("name")
-- name: schemajoin/using-main-backtick-master
SELECT count(*) FROM (SELECT 'accounts_opened_pin' AS name) JOIN `main`.sqlite_master USING (name)
-- name: schemajoin/using-main-quoted-schema
SELECT count(*) FROM (SELECT 'dept_pay' AS name) JOIN "main"."sqlite_schema" USING (name)
-- name: schemajoin/using-mixed-case-master
SELECT count(*) FROM (SELECT 'salary_rank' AS name) JOIN SQLite_Master USING (name)
-- name: schemajoin/using-temp-master
SELECT count(*) FROM (SELECT 'departments' AS name) JOIN temp.sqlite_master USING (name)
-- name: schemajoin/inner-using-temp-schema
SELECT count(*) FROM (SELECT 'departments' AS name) INNER JOIN sqlite_temp_schema USING (name)
-- name: schemajoin/natural-temp-master
SELECT count(*) FROM (SELECT 'departments' AS name) NATURAL JOIN sqlite_temp_master
-- name: schemajoin/left-using-schema
SELECT count(*) FROM (SELECT 'departments' AS name) LEFT JOIN sqlite_schema USING (name)
-- name: schemajoin/natural-left-master-tbl-name
SELECT count(*) FROM (SELECT 'accounts' AS tbl_name) NATURAL LEFT JOIN sqlite_master
-- name: schemajoin/right-using-schema-count
SELECT count(*) FROM (SELECT 'x' AS name) RIGHT JOIN sqlite_schema USING (name)
-- name: schemajoin/full-using-schema-count
SELECT count(*) FROM (SELECT 'x' AS name) FULL JOIN sqlite_schema USING (name)
-- name: schemajoin/cross-using-master
SELECT count(*) FROM (SELECT 'departments' AS name) CROSS JOIN sqlite_master USING (name)
-- name: schemajoin/natural-master-type-count
SELECT count(*) FROM (SELECT 'table' AS type) NATURAL JOIN sqlite_schema
-- name: schemajoin/natural-master-sql-oracle
SELECT count(*) FROM sqlite_schema NATURAL JOIN (SELECT 'CREATE INDEX employees_salary ON employees(salary)' AS sql)
-- name: schemajoin/in-subquery-natural-master
SELECT id FROM departments WHERE 1 IN (SELECT count(*) FROM (SELECT 'departments' AS name) NATURAL JOIN sqlite_master)
-- name: schemajoin/exists-using-schema
SELECT 1 FROM departments WHERE EXISTS (SELECT 1 FROM (SELECT 'senior' AS name) JOIN sqlite_schema USING (name))
-- name: schemajoin/json-each-natural-master
SELECT count(*) FROM json_each('[1]') NATURAL JOIN sqlite_master
-- name: schemajoin/natural-sequence
SELECT count(*) FROM (SELECT 'audit' || '_log' AS name) NATURAL JOIN sqlite_sequence
-- name: schemajoin/using-sequence-seq
SELECT count(*) FROM (SELECT 2 AS seq) JOIN sqlite_sequence USING (seq)
-- name: schemajoin/natural-stat1
SELECT count(*) FROM (SELECT 'departments' AS tbl) NATURAL JOIN sqlite_stat1
-- name: schemajoin/using-stat1
SELECT count(*) FROM (SELECT 'departments' AS tbl, '3' AS stat) JOIN sqlite_stat1 USING (tbl, stat)
-- name: schemajoin/natural-left-stat4
SELECT count(*) FROM (SELECT 'departments' AS tbl) NATURAL LEFT JOIN sqlite_stat4
-- name: schemajoin/natural-dbstat
SELECT count(*) FROM (SELECT 'departments' AS name) NATURAL JOIN dbstat
-- name: schemajoin/using-dbstat-table-valued
SELECT count(*) FROM (SELECT 'accounts_iban' AS name) JOIN dbstat('main') USING (name)
-- name: schemajoin/natural-pragma-table-info
SELECT count(*) FROM (SELECT 'salary' AS name) NATURAL JOIN pragma_table_info(char(101, 109, 112, 108, 111, 121, 101, 101, 115))
-- name: schemajoin/using-pragma-table-xinfo
SELECT count(*) FROM (SELECT 'pin' AS name) JOIN pragma_table_xinfo('accounts') USING (name)
-- name: schemajoin/natural-pragma-table-list
SELECT count(*) FROM (SELECT 'audit' || '_log' AS name) NATURAL JOIN pragma_table_list
-- name: schemajoin/using-main-pragma-index-list
SELECT count(*) FROM (SELECT 'accounts_iban' AS name) JOIN main.pragma_index_list('accounts') USING (name)
-- name: schemajoin/full-using-schema-names
SELECT name FROM (SELECT NULL AS name WHERE 0) FULL JOIN sqlite_schema USING (name)
-- name: schemajoin/full-using-dbpage-data
SELECT data FROM (SELECT NULL AS data WHERE 0) FULL JOIN sqlite_dbpage USING (data)
-- name: schemajoin/natural-right-dbpage-star
SELECT * FROM (SELECT NULL AS data WHERE 0) NATURAL RIGHT JOIN sqlite_dbpage
-- name: schemajoin/subquery-star-natural-schema
SELECT count(*) FROM (SELECT 'departments' AS name) NATURAL JOIN (SELECT * FROM sqlite_schema)
-- name: schemajoin/cte-star-using-master
WITH m AS (SELECT * FROM sqlite_master) SELECT count(*) FROM (SELECT 'departments' AS name) JOIN m USING (name)
-- name: more/window-using-order-hidden
SELECT rank() OVER (ORDER BY pin) FROM accounts JOIN (SELECT 'PIN-SECRET-7731' AS pin) USING (pin)
-- name: more/window-right-using-coalesce
SELECT id, row_number() OVER (ORDER BY owner) FROM (SELECT NULL AS owner WHERE 0) RIGHT JOIN accounts USING (owner)
-- name: more/window-full-using-first-value
SELECT id, first_value(owner) OVER (ORDER BY id) FROM accounts FULL JOIN (SELECT NULL AS owner WHERE 0) USING (owner)
-- name: more/window-partition-hidden-natural
SELECT count(*) OVER (PARTITION BY pin) FROM accounts FULL JOIN (SELECT 1 AS x) ON 0 NATURAL JOIN (SELECT 1 AS y)
-- name: more/compound-union-right-using
SELECT pin FROM (SELECT NULL AS pin WHERE 0) RIGHT JOIN accounts USING (pin) UNION SELECT name FROM departments
-- name: more/compound-except-using-oracle
SELECT id FROM accounts JOIN (SELECT 'PIN-SECRET-7731' AS pin) USING (pin) EXCEPT SELECT 99
-- name: more/compound-intersect-full-using
SELECT kind FROM accounts INTERSECT SELECT owner FROM (SELECT NULL AS owner WHERE 0) FULL JOIN accounts USING (owner)
-- name: more/in-subquery-natural-oracle
SELECT id FROM departments WHERE id IN (SELECT dept_id FROM accounts NATURAL JOIN (SELECT 'PIN-SECRET-7731' AS pin))
-- name: more/in-subquery-natural-value
SELECT id FROM departments WHERE 'PIN-SECRET-7731' IN (SELECT pin FROM accounts NATURAL JOIN (SELECT 1 AS id))
-- name: more/order-by-subquery-natural
SELECT id FROM departments ORDER BY (SELECT count(*) FROM accounts NATURAL JOIN (SELECT 'PIN-SECRET-7731' AS pin)), id
-- name: more/json-each-hidden-column
SELECT value FROM accounts, json_each(json_array(pin))
-- name: more/json-tree-hidden-object
SELECT key FROM json_tree((SELECT json_group_object(id, iban) FROM accounts))
-- name: more/json-each-on-hidden
SELECT count(*) FROM accounts a JOIN json_each('["PIN-SECRET-7731"]') j ON j.value = a.pin
-- name: more/json-each-using-id
SELECT count(*) FROM accounts JOIN json_each('["PIN-SECRET-7731"]') USING (id)
-- name: more/json-each-natural-accounts
SELECT count(*) FROM json_each('[1]') NATURAL JOIN accounts
-- name: more/json-each-natural-value-oracle
SELECT count(*) FROM (SELECT 'XQ12SECRET0001' AS value) NATURAL JOIN json_each((SELECT json_group_array(iban) FROM accounts))
-- name: more/generated-stored-using
SELECT count(*) FROM accounts JOIN (SELECT 'XQ' AS country) USING (country)
-- name: more/generated-virtual-natural
SELECT count(*) FROM accounts NATURAL JOIN (SELECT 'O' AS initial)
-- name: more/generated-virtual-where
SELECT id FROM accounts WHERE band = 'high' AND initial = 'O'
-- name: more/generated-stored-right-using
SELECT country FROM (SELECT NULL AS country WHERE 0) RIGHT JOIN accounts USING (country)
-- name: more/generated-stored-order-by
SELECT id FROM accounts ORDER BY country
-- name: more/indexed-by-then-order-hidden
SELECT id FROM accounts INDEXED BY accounts_balance WHERE balance > 0 ORDER BY pin
-- name: more/indexed-by-quoted
SELECT id FROM accounts INDEXED BY "accounts_iban" WHERE 1
-- name: more/indexed-by-bracketed
SELECT id FROM accounts INDEXED BY [accounts_opened_pin] WHERE opened > ''
-- name: more/indexed-by-upper-main
SELECT id FROM main.accounts INDEXED BY ACCOUNTS_IBAN
-- name: more/indexed-by-expression-alias
SELECT id FROM accounts AS a INDEXED BY accounts_lower_owner WHERE lower(a.owner) > ''
-- name: more/indexed-by-count-range
SELECT count(*) FROM accounts INDEXED BY accounts_iban WHERE iban > ''
-- name: more/range-hidden-order-by-visible
SELECT id FROM accounts WHERE iban > '' ORDER BY id
-- name: more/min-hidden-is-null
SELECT min(iban) IS NULL FROM accounts
-- name: more/expression-index-range
SELECT id FROM accounts WHERE lower(owner) > 'owner secret h'
-- name: fulljoin/alias-named-like-table
SELECT pin FROM (SELECT NULL AS pin WHERE 0) AS accounts FULL JOIN main.accounts USING (pin)
-- name: fulljoin/literal-left-hidden-right
SELECT x FROM (SELECT 1 AS x) s FULL JOIN (SELECT pin AS x FROM accounts) t USING (x)
-- name: fulljoin/natural-hidden-subquery
SELECT owner FROM (SELECT NULL AS owner WHERE 0) s NATURAL FULL JOIN (SELECT id, owner FROM accounts)
-- name: fulljoin/using-visible-filter-hidden
SELECT id, kind FROM (SELECT NULL AS kind WHERE 0) s FULL JOIN (SELECT id, kind FROM accounts WHERE pin > 'PIN-SECRET-5') t USING (kind)
-- name: fulljoin/unaliased-hidden-right
SELECT k FROM (SELECT 1 AS k) s FULL JOIN (SELECT pin AS k FROM accounts) USING (k)
-- name: fulljoin/cte-hidden-right
WITH c(k) AS (SELECT iban FROM accounts) SELECT k FROM (SELECT NULL AS k WHERE 0) s FULL JOIN c USING (k)
-- name: fulljoin/cte-left-hidden-right
WITH c(k) AS (SELECT NULL WHERE 0) SELECT k FROM c FULL JOIN (SELECT iban AS k FROM accounts) USING (k)
-- name: fulljoin/base-through-subquery
SELECT k FROM (SELECT NULL AS k WHERE 0) AS s FULL JOIN (SELECT salary AS k FROM employees) USING (k)
-- name: fulljoin/hidden-view-through-subquery
SELECT k FROM (SELECT NULL AS k WHERE 0) AS s FULL JOIN (SELECT email AS k FROM staff_all) USING (k)
-- name: fulljoin/json-each-hidden-right
SELECT k FROM (SELECT NULL AS k WHERE 0) AS s FULL JOIN (SELECT value AS k FROM json_each((SELECT json_group_array(pin) FROM accounts))) USING (k)
-- name: fulljoin/hidden-left-qualified
SELECT s.k FROM (SELECT pin AS k FROM accounts) s FULL JOIN (SELECT 1 AS k) USING (k)
-- name: count/audit-log-natural
SELECT count(*) FROM (SELECT 1 AS x) NATURAL JOIN audit_log
-- name: count/audit-log-using-quoted
SELECT count(*) FROM (SELECT 1 AS id) JOIN "audit_log" USING (id)
-- name: count/audit-log-exists
SELECT count(*) FROM departments WHERE EXISTS (SELECT 1 FROM audit_log)
-- name: hide/audit-log-note
SELECT note FROM audit_log
-- name: fulljoin/audit-log-coalesce
SELECT note FROM (SELECT NULL AS note WHERE 0) FULL JOIN audit_log USING (note)
-- name: schema/sequence-count
SELECT count(*) FROM sqlite_sequence
-- name: schema/stat1-full-on
SELECT count(*) FROM (SELECT 1) FULL JOIN sqlite_stat1 ON 1
-- name: schema/dbstat-cross
SELECT count(*) FROM departments CROSS JOIN dbstat
-- name: fulljoin/coalesce-order-by-hidden
SELECT kind FROM (SELECT NULL AS kind WHERE 0) s FULL JOIN accounts USING (kind) ORDER BY pin
-- name: fulljoin/coalesce-having-hidden
SELECT kind, count(*) FROM (SELECT 'checking' AS kind) s FULL JOIN accounts a USING (kind) GROUP BY kind HAVING max(a.iban) > ''
-- name: fulljoin/coalesce-where-hidden
SELECT id FROM (SELECT NULL AS id WHERE 0) s FULL JOIN accounts USING (id) WHERE owner LIKE 'Owner SECRET G%'
-- name: fulljoin/not-indexed-order-hidden
SELECT id FROM (SELECT 1 AS id) s FULL JOIN accounts NOT INDEXED USING (id) ORDER BY iban
-- name: view/unexposed-row-set
SELECT * FROM vip_accounts
-- name: view/unexposed-row-set-join
SELECT a.id, a.kind FROM accounts a JOIN vip_accounts v USING (id)
-- name: view/unexposed-row-set-in
SELECT count(*) FROM accounts WHERE id IN (SELECT id FROM main.vip_accounts)
-- name: view/unexposed-constant
SELECT flag FROM release_flags
-- name: view/unexposed-constant-quoted
SELECT * FROM "Release_Flags"
-- name: view/unexposed-constant-cte
WITH f AS (SELECT * FROM [release_flags]) SELECT * FROM f
-- name: offset/record-size
SELECT id, sqlite_offset(kind) FROM accounts
-- name: offset/record-size-between-rows
SELECT a.id, (SELECT sqlite_offset(b.kind) FROM accounts b WHERE b.id = a.id - 1) - sqlite_offset(a.kind) FROM accounts a ORDER BY id
-- name: offset/rowid-table
SELECT d.id, sqlite_offset(a.dept_id) FROM departments d JOIN accounts a ON a.dept_id = d.id

