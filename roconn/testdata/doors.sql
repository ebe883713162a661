-- The second fixture of roconn's tests: exposed views of every shape over
-- tables the policy does not expose (doors_policy.yaml), and an exposed
-- table with hidden columns. Every private value contains "SECRET" or is a
-- salary of the form 91xxxxx, so a test can look for it in any output.
CREATE TABLE departments (id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT NOT NULL);
CREATE TABLE employees (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  dept_id INTEGER NOT NULL REFERENCES departments(id),
  region TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  salary INTEGER NOT NULL,
  manager_id INTEGER REFERENCES employees(id),
  hired TEXT NOT NULL
);
CREATE INDEX employees_salary ON employees(salary);
CREATE INDEX employees_region ON employees(region);
CREATE TABLE reviews (id INTEGER PRIMARY KEY, employee_id INTEGER NOT NULL REFERENCES employees(id), score INTEGER NOT NULL, comment TEXT NOT NULL);
CREATE TABLE accounts (
  id INTEGER PRIMARY KEY,
  owner TEXT NOT NULL,
  iban TEXT NOT NULL,
  pin TEXT NOT NULL,
  balance REAL NOT NULL,
  opened TEXT NOT NULL,
  kind TEXT NOT NULL,
  band TEXT AS (CASE WHEN balance >= 1000 THEN 'high' ELSE 'low' END) VIRTUAL,
  initial TEXT AS (substr(owner, 1, 1)) VIRTUAL,
  country TEXT AS (substr(iban, 1, 2)) STORED,
  dept_id INTEGER REFERENCES departments(id),
  manager_email TEXT REFERENCES employees(email)
);
CREATE INDEX accounts_iban ON accounts(iban);
CREATE INDEX accounts_opened_pin ON accounts(opened, pin);
CREATE INDEX accounts_balance ON accounts(balance);
CREATE INDEX accounts_lower_owner ON accounts(lower(owner));
-- A table the policy does not expose whose AUTOINCREMENT fills sqlite_sequence.
CREATE TABLE audit_log (id INTEGER PRIMARY KEY AUTOINCREMENT, note TEXT NOT NULL);

-- An aggregate: average pay per department, never a salary.
CREATE VIEW dept_pay AS SELECT dept_id, avg(salary) AS avg_salary, count(*) AS headcount FROM employees GROUP BY dept_id;
-- A row filter: the west's employees only.
CREATE VIEW west_staff AS SELECT id, name, dept_id FROM employees WHERE region = 'west';
-- A window: each employee's pay rank in the department, not the pay.
CREATE VIEW salary_rank AS SELECT id, dept_id, rank() OVER (PARTITION BY dept_id ORDER BY salary DESC) AS pay_rank FROM employees;
-- A view the policy does not expose, and an exposed view over it.
CREATE VIEW staff_all AS SELECT id, name, dept_id, region, email, salary FROM employees;
CREATE VIEW staff_dir AS SELECT id, dept_id FROM staff_all;
-- A computed column: the e-mail domain, not the address.
CREATE VIEW email_domains AS SELECT id, substr(email, instr(email, '@') + 1) AS domain FROM employees;
-- A view that joins a table the policy does not expose.
CREATE VIEW review_scores AS SELECT e.id AS employee_id, e.dept_id, r.score FROM employees e JOIN reviews r ON r.employee_id = e.id;
-- A view with a common table expression of its own.
CREATE VIEW senior AS WITH s AS (SELECT id, dept_id FROM employees WHERE salary > 9100050) SELECT id, dept_id FROM s;
-- Views the policy does not expose over only what it does expose: what they
-- show that no table holds is in their definitions (a chosen set of rows, a
-- constant), and no cursor of a program reads it.
CREATE VIEW vip_accounts AS SELECT id, kind, balance FROM accounts WHERE id IN (2, 3);
CREATE VIEW release_flags AS SELECT 'FLAG SECRET 0099' AS flag;

INSERT INTO departments VALUES (1, 'Sales', 'west'), (2, 'Support', 'east'), (3, 'Research', 'west');
INSERT INTO employees VALUES
  (1, 'West Ada', 1, 'west', 'ada.SECRET@corp.example', 9100011, NULL, '2020-01-06'),
  (2, 'West Bo', 1, 'west', 'bo.SECRET@corp.example', 9100023, 1, '2021-03-01'),
  (3, 'East SECRET Cy', 2, 'east', 'cy.SECRET@corp.example', 9100037, 1, '2021-07-19'),
  (4, 'East SECRET Di', 2, 'east', 'di.SECRET@corp.example', 9100041, 3, '2022-02-14'),
  (5, 'West Ed', 3, 'west', 'ed.SECRET@corp.example', 9100059, 1, '2022-11-30'),
  (6, 'East SECRET Flo', 3, 'east', 'flo.SECRET@corp.example', 9100067, 5, '2023-05-02');
INSERT INTO reviews VALUES
  (1, 1, 4, 'SECRET review: late twice'), (2, 2, 5, 'SECRET review: great'),
  (3, 3, 3, 'SECRET review: fine'), (4, 5, 2, 'SECRET review: rude'), (5, 6, 4, 'SECRET review: ok');
INSERT INTO accounts (id, owner, iban, pin, balance, opened, kind, dept_id, manager_email) VALUES
  (1, 'Owner SECRET Gus', 'XQ12SECRET0001', 'PIN-SECRET-7731', 1500.0, '2024-01-02', 'checking', 1, 'ada.SECRET@corp.example'),
  (2, 'Owner SECRET Hal', 'ZR34SECRET0002', 'PIN-SECRET-1204', 250.5, '2024-02-03', 'savings', 2, NULL),
  (3, 'Owner SECRET Ida', 'XQ56SECRET0003', 'PIN-SECRET-5550', 99.0, '2024-03-04', 'checking', 3, NULL),
  (4, 'Owner SECRET Jo', 'WV78SECRET0004', 'PIN-SECRET-0042', 3200.0, '2024-04-05', 'savings', 1, NULL);
INSERT INTO audit_log (note) VALUES ('SECRET audit: pin reset'), ('SECRET audit: iban changed');
-- sqlite_stat1 and sqlite_stat4, with one table's statistics.
ANALYZE departments;
