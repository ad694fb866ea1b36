-- SPDX-License-Identifier: MIT
-- Deterministic scripted database for preload_sqlite.sh: run by Debian's
-- sqlite3 on glibc's malloc and with LD_PRELOAD=libbrisk.so; outputs compared.
.bail on
.headers on
.mode list
PRAGMA page_size = 4096;
PRAGMA cache_size = -8000;
CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, score INTEGER);
CREATE TABLE orders(id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
                    amount REAL, status TEXT, note TEXT);
CREATE TABLE cities(name TEXT PRIMARY KEY, country TEXT) WITHOUT ROWID;

BEGIN;
WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c WHERE x < 39)
INSERT INTO cities SELECT 'city' || x, 'country' || (x % 7) FROM c;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
INSERT INTO customers
SELECT x, printf('customer-%06d-%s', (x * 7919) % 100003, substr('abcdefghijklmnopqrstuvwxyz', 1 + x % 26, 1 + x % 11)),
       'city' || ((x * 13) % 40), (x * 2654435761) % 1000
FROM c;
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 120000)
INSERT INTO orders
SELECT x, 1 + (x * 48271) % 20000, ((x * 37) % 100000) / 100.0,
       CASE x % 5 WHEN 0 THEN 'new' WHEN 1 THEN 'paid' WHEN 2 THEN 'shipped' WHEN 3 THEN 'returned' ELSE 'closed' END,
       replace(hex(zeroblob(x % 60)), '00', 'ab') || printf('%d', x * x)
FROM c;
COMMIT;

CREATE INDEX orders_customer ON orders(customer_id);
CREATE INDEX orders_status_amount ON orders(status, amount);
CREATE INDEX customers_city ON customers(city, score);

SELECT count(*) AS customers FROM customers;
SELECT count(*) AS orders, round(sum(amount), 2) AS total, round(avg(amount), 4) AS average FROM orders;

SELECT ci.country, count(DISTINCT cu.id) AS buyers, count(o.id) AS n, round(sum(o.amount), 2) AS total
FROM orders o JOIN customers cu ON cu.id = o.customer_id JOIN cities ci ON ci.name = cu.city
GROUP BY ci.country ORDER BY total DESC;

SELECT status, count(*), round(min(amount), 2), round(max(amount), 2) FROM orders GROUP BY status ORDER BY status;

SELECT cu.name, count(*) AS n, round(sum(o.amount), 2) AS spent
FROM customers cu JOIN orders o ON o.customer_id = cu.id
GROUP BY cu.id ORDER BY spent DESC, cu.id LIMIT 15;

SELECT city, score, name FROM (
  SELECT city, score, name, row_number() OVER (PARTITION BY city ORDER BY score DESC, id) AS rk FROM customers)
WHERE rk = 1 ORDER BY city LIMIT 12;

SELECT length(group_concat(note, ',')) AS concat_len, count(DISTINCT note) AS distinct_notes FROM orders;
SELECT substr(note, 1, 40) AS note FROM orders ORDER BY note DESC LIMIT 5;

UPDATE orders SET amount = amount * 1.1, note = note || '-updated' WHERE status = 'returned';
DELETE FROM orders WHERE id % 7 = 0;
DELETE FROM customers WHERE id NOT IN (SELECT customer_id FROM orders);
SELECT changes() AS last_changes, total_changes() AS all_changes;
SELECT count(*) AS orders_left, round(sum(amount), 2) AS total_left FROM orders;
SELECT count(*) AS customers_left FROM customers;

CREATE TEMP TABLE big AS SELECT id, note || note || note AS n3 FROM orders WHERE id % 3 = 0;
SELECT count(*), sum(length(n3)) FROM big;
DROP TABLE big;

VACUUM;
PRAGMA integrity_check;
SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY name;

WITH RECURSIVE fib(a, b, n) AS (SELECT 0, 1, 0 UNION ALL SELECT b, a + b, n + 1 FROM fib WHERE n < 80)
SELECT n, a FROM fib WHERE n % 10 = 0;
SELECT json_group_array(json_object('id', id, 'city', city)) AS j FROM (SELECT id, city FROM customers ORDER BY id LIMIT 5);
