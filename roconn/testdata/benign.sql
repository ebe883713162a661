-- Honest analyst statements for shop.sql (shaped like the demo database). Each record starts with a
-- line "-- name: NAME"; the statement is everything up to the next such line.
-- Every one must run through the guard and roconn and return the same rows as
-- a plain read-only connection (corpus_test.go). Keep results at or under the
-- row cap (200) unless the name ends in "-capped".

-- name: count-orders
SELECT count(*) FROM orders
-- name: count-lowercase
select count(*) from order_lines
-- name: regions
SELECT id, name FROM regions ORDER BY id
-- name: customers-per-region
SELECT region, count(*) AS customers FROM customer_regions GROUP BY region ORDER BY region
-- name: sales-2025
SELECT count(*) FROM orders WHERE status = 'shipped' AND day >= '2025-01-01' AND day < '2026-01-01'
-- name: revenue-june-2025
SELECT round(sum(ol.line_total), 2) AS revenue
FROM order_lines ol JOIN orders o ON o.id = ol.order_id
WHERE o.status = 'shipped' AND o.day >= '2025-06-01' AND o.day < '2025-07-01'
-- name: revenue-by-month-2025
SELECT substr(o.day, 1, 7) AS month, round(sum(ol.line_total), 2) AS revenue
FROM orders o JOIN order_lines ol ON ol.order_id = o.id
WHERE o.status = 'shipped' AND o.day >= '2025-01-01' AND o.day < '2026-01-01'
GROUP BY month ORDER BY month
-- name: strftime-month
SELECT strftime('%Y-%m', day) AS m, count(*) FROM orders GROUP BY m ORDER BY m
-- name: strftime-weekday
SELECT strftime('%w', day) AS weekday, count(*) FROM orders GROUP BY weekday ORDER BY weekday
-- name: date-arithmetic
SELECT id, day, date(day, '+30 days') AS due FROM orders ORDER BY id LIMIT 20
-- name: julianday-delivery-time
SELECT round(avg(julianday(delivered_day) - julianday(shipped_day)), 2) FROM shipments WHERE delivered_day IS NOT NULL
-- name: top-products-units
SELECT p.name, sum(ol.qty) AS units
FROM order_lines ol JOIN orders o ON o.id = ol.order_id JOIN products p ON p.id = ol.product_id
WHERE o.status = 'shipped'
GROUP BY p.id ORDER BY units DESC, p.name LIMIT 10
-- name: three-table-join
SELECT r.name AS region, count(DISTINCT o.id) AS orders
FROM orders o JOIN stores s ON s.id = o.store_id JOIN regions r ON r.id = s.region_id
GROUP BY r.name ORDER BY r.name
-- name: four-table-join
SELECT c.name AS category, r.name AS region, round(sum(ol.line_total), 2) AS revenue
FROM order_lines ol
JOIN orders o ON o.id = ol.order_id
JOIN products p ON p.id = ol.product_id
JOIN categories c ON c.id = p.category_id
JOIN stores s ON s.id = o.store_id
JOIN regions r ON r.id = s.region_id
WHERE o.status = 'shipped'
GROUP BY c.name, r.name ORDER BY c.name, r.name
-- name: self-join-manager
SELECT e.first_name || ' ' || e.last_name AS employee, m.first_name || ' ' || m.last_name AS manager
FROM staff e LEFT JOIN staff m ON m.id = e.manager_id ORDER BY e.id
-- name: self-join-most-reports
SELECT m.first_name || ' ' || m.last_name AS manager, count(*) AS reports
FROM staff e JOIN staff m ON m.id = e.manager_id
GROUP BY m.id ORDER BY reports DESC, manager LIMIT 5
-- name: link-table
SELECT pr.code, count(*) AS orders
FROM order_promotions op JOIN promotions pr ON pr.id = op.promotion_id
GROUP BY pr.code ORDER BY pr.code
-- name: cte-simple
WITH monthly AS (
  SELECT substr(day, 1, 7) AS month, count(*) AS n FROM orders GROUP BY month
)
SELECT month, n FROM monthly ORDER BY n DESC, month LIMIT 5
-- name: cte-two
WITH shipped AS (SELECT id, day FROM orders WHERE status = 'shipped'),
     lines AS (SELECT order_id, sum(qty) AS units FROM order_lines GROUP BY order_id)
SELECT count(*), sum(lines.units) FROM shipped JOIN lines ON lines.order_id = shipped.id
-- name: cte-named-like-table
WITH orders AS (SELECT * FROM main.orders WHERE status = 'pending') SELECT count(*) FROM orders
-- name: recursive-ends
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 12)
SELECT x FROM n
-- name: recursive-months
WITH RECURSIVE months(m) AS (
  SELECT '2025-01-01' UNION ALL SELECT date(m, '+1 month') FROM months WHERE m < '2025-12-01'
)
SELECT months.m, count(o.id) FROM months LEFT JOIN orders o ON o.day >= months.m AND o.day < date(months.m, '+1 month')
GROUP BY months.m ORDER BY months.m
-- name: recursive-category-tree
WITH RECURSIVE tree(id, name, depth) AS (
  SELECT id, name, 0 FROM categories WHERE parent_id IS NULL
  UNION ALL
  SELECT c.id, c.name, t.depth + 1 FROM categories c JOIN tree t ON c.parent_id = t.id
)
SELECT id, name, depth FROM tree ORDER BY depth, name
-- name: recursive-management-chain
WITH RECURSIVE chain(id, manager_id, depth) AS (
  SELECT id, manager_id, 0 FROM staff WHERE manager_id IS NULL
  UNION ALL
  SELECT s.id, s.manager_id, c.depth + 1 FROM staff s JOIN chain c ON s.manager_id = c.id
)
SELECT depth, count(*) FROM chain GROUP BY depth ORDER BY depth
-- name: window-rank
SELECT name, price, rank() OVER (ORDER BY price DESC) AS r FROM products ORDER BY r, name LIMIT 15
-- name: window-partition
SELECT category_id, name, price,
       row_number() OVER (PARTITION BY category_id ORDER BY price DESC, id) AS rn
FROM products ORDER BY category_id, rn
-- name: window-running-total
SELECT substr(day, 1, 7) AS month, count(*) AS n,
       sum(count(*)) OVER (ORDER BY substr(day, 1, 7)) AS running
FROM orders GROUP BY month ORDER BY month
-- name: window-lag
SELECT month, revenue, revenue - lag(revenue) OVER (ORDER BY month) AS change FROM (
  SELECT substr(o.day, 1, 7) AS month, round(sum(ol.line_total), 2) AS revenue
  FROM orders o JOIN order_lines ol ON ol.order_id = o.id WHERE o.status = 'shipped' GROUP BY month
) ORDER BY month
-- name: window-dense-rank-ntile
SELECT id, total, dense_rank() OVER (ORDER BY total DESC) AS dr, ntile(4) OVER (ORDER BY total) AS q
FROM orders ORDER BY total DESC, id LIMIT 20
-- name: window-first-last
SELECT DISTINCT category_id,
  first_value(name) OVER w AS cheapest, last_value(name) OVER w AS dearest
FROM products WINDOW w AS (PARTITION BY category_id ORDER BY price, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
ORDER BY category_id
-- name: window-percent
SELECT id, percent_rank() OVER (ORDER BY total) AS pr, cume_dist() OVER (ORDER BY total) AS cd FROM orders ORDER BY id LIMIT 10
-- name: union
SELECT 'store' AS kind, count(*) FROM orders WHERE channel = 'store'
UNION
SELECT 'online', count(*) FROM orders WHERE channel = 'online'
ORDER BY 1
-- name: union-all
SELECT status FROM orders WHERE id <= 5 UNION ALL SELECT status FROM orders WHERE id <= 5
-- name: intersect
SELECT customer_id FROM orders WHERE day < '2025-01-01'
INTERSECT
SELECT customer_id FROM orders WHERE day >= '2025-01-01'
ORDER BY 1 LIMIT 50
-- name: except
SELECT id FROM products EXCEPT SELECT product_id FROM order_lines ORDER BY 1
-- name: distinct
SELECT DISTINCT status FROM orders ORDER BY status
-- name: distinct-count
SELECT count(DISTINCT customer_id) FROM orders
-- name: in-subquery
SELECT name FROM products WHERE id IN (SELECT product_id FROM order_lines WHERE qty >= 5) ORDER BY name
-- name: not-in-subquery
SELECT name FROM stores WHERE id NOT IN (SELECT store_id FROM orders WHERE store_id IS NOT NULL AND status = 'returned') ORDER BY name
-- name: not-exists
SELECT p.name FROM products p WHERE NOT EXISTS (SELECT 1 FROM order_lines ol WHERE ol.product_id = p.id) ORDER BY p.name
-- name: scalar-subquery
SELECT name, (SELECT count(*) FROM orders o WHERE o.store_id = s.id) AS orders FROM stores s ORDER BY name
-- name: correlated-subquery
SELECT o.id, o.total FROM orders o
WHERE o.total > (SELECT avg(total) * 3 FROM orders) ORDER BY o.total DESC LIMIT 10
-- name: derived-table
SELECT avg(n) FROM (SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id)
-- name: case
SELECT CASE WHEN total >= 500 THEN 'large' WHEN total >= 100 THEN 'medium' ELSE 'small' END AS size, count(*)
FROM orders GROUP BY size ORDER BY size
-- name: case-simple
SELECT status, CASE status WHEN 'shipped' THEN 1 ELSE 0 END AS is_sale FROM orders WHERE id <= 10
-- name: having
SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id HAVING n >= 12 ORDER BY n DESC, customer_id
-- name: percentage
SELECT round(100.0 * sum(status = 'returned') / count(*), 1) AS pct_returned FROM orders WHERE day >= '2025-01-01' AND day < '2026-01-01'
-- name: iif-nullif
SELECT iif(channel = 'online', 'web', 'shop') AS c, count(*), nullif(count(*), 0) FROM orders GROUP BY c ORDER BY c
-- name: coalesce-null
SELECT coalesce(loyalty_tier, 'none') AS tier, count(*) FROM customer_regions GROUP BY tier ORDER BY tier
-- name: is-null
SELECT count(*) FROM orders WHERE store_id IS NULL
-- name: null-delivered
SELECT count(*) FROM shipments WHERE delivered_day IS NULL
-- name: left-join-nulls
SELECT s.name, count(r.id) AS returns FROM stores s
LEFT JOIN orders o ON o.store_id = s.id LEFT JOIN returns r ON r.order_id = o.id
GROUP BY s.id ORDER BY s.name
-- name: string-functions
SELECT upper(name), lower(sku), length(name), substr(sku, 1, 3), instr(name, ' '), trim('  x  '), replace(name, ' ', '_') FROM products ORDER BY id LIMIT 10
-- name: like-glob
SELECT name FROM products WHERE name LIKE '%tent%' OR name GLOB '*Pack*' ORDER BY name
-- name: printf-format
SELECT printf('%s costs %.2f', name, price), format('%d', id) FROM products ORDER BY id LIMIT 5
-- name: concat
SELECT concat(first_name, ' ', last_name), concat_ws(', ', last_name, first_name) FROM staff ORDER BY id LIMIT 10
-- name: math-functions
SELECT round(avg(price), 2), max(price), min(price), abs(-1), ceil(1.2), floor(1.8), sqrt(16), power(2, 10), round(ln(10), 4) FROM products
-- name: total-vs-sum
SELECT total(refund), sum(refund), count(refund) FROM returns
-- name: group-concat-small
SELECT group_concat(name, ', ') FROM regions
-- name: json-functions
SELECT json_object('id', id, 'name', name), json_array(id, price) FROM products ORDER BY id LIMIT 5
-- name: json-group
SELECT category_id, json_group_array(sku) FROM products GROUP BY category_id ORDER BY category_id
-- name: typeof
SELECT typeof(total), typeof(note), typeof(id) FROM orders ORDER BY id LIMIT 3
-- name: keyword-in-string
SELECT count(*) FROM orders WHERE note = 'DELETE FROM orders'
-- name: delete-as-name
SELECT count(*) FROM staff WHERE last_name = 'Delete'
-- name: update-in-string
SELECT 'UPDATE products SET price = 0' AS text
-- name: keyword-in-quoted-alias
SELECT count(*) AS "delete", count(*) AS [drop], count(*) AS `insert` FROM orders
-- name: keyword-like-column-names
SELECT id AS updated_at, day AS created_day, status AS deleted_flag FROM orders ORDER BY id LIMIT 3
-- name: injected-note
SELECT id, note FROM orders WHERE note LIKE 'SYSTEM:%'
-- name: notes
SELECT id, note FROM orders WHERE note IS NOT NULL ORDER BY id
-- name: trailing-semicolon
SELECT count(*) FROM products;
-- name: trailing-semicolon-comment
SELECT count(*) FROM stores; -- that's all
-- name: existing-limit
SELECT id FROM orders ORDER BY id LIMIT 5
-- name: existing-limit-offset
SELECT id FROM orders ORDER BY id LIMIT 5 OFFSET 10
-- name: existing-limit-comma
SELECT id FROM orders ORDER BY id LIMIT 10, 5
-- name: limit-in-cte-only
WITH recent AS (SELECT id, day FROM orders ORDER BY day DESC LIMIT 3) SELECT * FROM recent ORDER BY id
-- name: leading-comment
-- orders per status
SELECT status, count(*) FROM orders GROUP BY status ORDER BY status
-- name: block-comment
SELECT /* the big ones */ id, total FROM orders ORDER BY total DESC LIMIT 3
-- name: trailing-line-comment
SELECT count(*) FROM returns -- returned orders only
-- name: comment-with-semicolon
SELECT count(*) FROM shipments /* ; not a second statement */
-- name: unicode-literal
SELECT 'Zoë · 北京 · 🏕️' AS s, length('Zoë') AS n
-- name: unicode-alias
SELECT count(*) AS "Anzahl Bestellungen ✓" FROM orders
-- name: between-dates
SELECT count(*) FROM orders WHERE day BETWEEN '2024-11-01' AND '2024-11-30'
-- name: order-by-expression
SELECT id, qty * unit_price AS v FROM order_lines ORDER BY v DESC, id LIMIT 10
-- name: nested-aggregates
SELECT max(n) FROM (SELECT count(*) AS n FROM order_lines GROUP BY order_id)
-- name: returns-reasons
SELECT reason, count(*), round(sum(refund), 2) FROM returns GROUP BY reason ORDER BY count(*) DESC, reason
-- name: carriers
SELECT carrier, count(*) FROM shipments GROUP BY carrier ORDER BY carrier
-- name: promotions-active
SELECT code, name, percent_off FROM promotions WHERE start_day <= '2025-06-15' AND end_day >= '2025-06-15' ORDER BY code
-- name: discontinued
SELECT count(*) FROM products WHERE discontinued = 1
-- name: customers-by-tier-region
SELECT region, loyalty_tier, count(*) FROM customer_regions GROUP BY region, loyalty_tier ORDER BY region, loyalty_tier
-- name: signup-by-year
SELECT substr(signup_day, 1, 4) AS y, count(*) FROM customer_regions GROUP BY y ORDER BY y
-- name: customer-id-only
SELECT count(DISTINCT id) FROM customer_regions
-- name: values-in-from
SELECT v.column1 AS status, (SELECT count(*) FROM orders WHERE status = v.column1) FROM (VALUES ('shipped'), ('pending')) v
-- name: all-orders-capped
SELECT id, day, status FROM orders ORDER BY id
-- name: all-lines-capped
SELECT * FROM order_lines
