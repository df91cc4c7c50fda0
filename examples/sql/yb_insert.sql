-- Experiment 1's ysql_bench script: one 2 kB row per statement, run with -c 30 -T 30 from 3 hosts.
-- The original calls uuid_generate_v4() (PostgreSQL needs the uuid-ossp extension for it; PostgreSQL 13+
-- has gen_random_uuid() built in). {{uuid}} draws the key on the client instead, so the same file runs
-- unchanged on PostgreSQL, YugabyteDB and MySQL/MariaDB.
--   benchwright sql postgres --init examples/sql/yb_insert_init.sql -f examples/sql/yb_insert.sql -c 30 -T 30 --url ...
insert into test1 values({{uuid}}, rpad('x',1000,'a'), rpad('x',1000,'a'));
