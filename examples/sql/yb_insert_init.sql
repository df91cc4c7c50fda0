-- Table for examples/sql/yb_insert.sql (portable: PostgreSQL, YugabyteDB, MySQL/MariaDB).
create table if not exists test1 (k varchar(36) primary key, v1 text, v2 text);
