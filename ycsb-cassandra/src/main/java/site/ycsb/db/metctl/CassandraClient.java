package site.ycsb.db.metctl;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.ColumnDefinition;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * YCSB binding over the DataStax Java driver 4.x: every operation is a CQL prepared statement on
 * the standard YCSB table ({@code y_id text PRIMARY KEY, field0 text, …}). read = SELECT by key,
 * scan = SELECT … WHERE token(y_id) >= token(?) LIMIT n (Cassandra orders by token, not by key,
 * as YCSB's own Cassandra binding does), insert = INSERT, update = UPDATE of the given fields,
 * delete = DELETE. One CqlSession per JVM (shared by YCSB's threads: it is thread-safe, pools its
 * connections and is heavy to open); statements are prepared once per (table, fields).
 *
 * <p>Properties (names as YCSB's cassandra-cql binding where it had one): {@code hosts}
 * (comma-separated addresses, required), {@code port} (9042), {@code cassandra.keyspace}
 * ("ycsb"), {@code cassandra.localdc} ("datacenter1", the SimpleSnitch's), {@code
 * cassandra.readconsistencylevel} and {@code cassandra.writeconsistencylevel} (QUORUM), {@code
 * cassandra.requesttimeout_ms} (10000: the server's own timeouts answer first).
 */
public class CassandraClient extends DB {
  private static final String KEY = "y_id";
  private static final Object LOCK = new Object();
  private static CqlSession session;
  private static int users;
  private static ConsistencyLevel readCl;
  private static ConsistencyLevel writeCl;
  private static final Map<String, PreparedStatement> PREPARED = new ConcurrentHashMap<>();
  // the first failures go to stderr: YCSB itself only counts them
  private static final AtomicInteger REPORTED = new AtomicInteger();

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    synchronized (LOCK) {
      if (session == null) {
        String hosts = p.getProperty("hosts");
        if (hosts == null || hosts.isBlank()) {
          throw new DBException("property 'hosts' is required (comma-separated Cassandra addresses)");
        }
        int port = Integer.parseInt(p.getProperty("port", "9042"));
        readCl = level(p, "cassandra.readconsistencylevel");
        writeCl = level(p, "cassandra.writeconsistencylevel");
        List<InetSocketAddress> points = new ArrayList<>();
        for (String h : hosts.split(",")) {
          if (!h.isBlank()) {
            points.add(new InetSocketAddress(h.trim(), port));
          }
        }
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT,
                Duration.ofMillis(Long.parseLong(p.getProperty("cassandra.requesttimeout_ms", "10000"))))
            .build();
        try {
          session = CqlSession.builder().addContactPoints(points)
              .withLocalDatacenter(p.getProperty("cassandra.localdc", "datacenter1"))
              .withKeyspace(p.getProperty("cassandra.keyspace", "ycsb"))
              .withConfigLoader(config).build();
        } catch (RuntimeException e) {
          throw new DBException("cannot connect to Cassandra at " + points + ": " + e, e);
        }
      }
      users++;
    }
  }

  private static ConsistencyLevel level(Properties p, String name) throws DBException {
    String v = p.getProperty(name, "QUORUM").trim().toUpperCase();
    try {
      return DefaultConsistencyLevel.valueOf(v);
    } catch (IllegalArgumentException e) {
      throw new DBException(name + "=" + v + ": not a consistency level (ONE, QUORUM, ALL, LOCAL_QUORUM, …)");
    }
  }

  @Override
  public void cleanup() throws DBException {
    synchronized (LOCK) {
      users--;
      if (users == 0 && session != null) {
        session.close();
        session = null;
        PREPARED.clear();
      }
    }
  }

  private static PreparedStatement prepared(String cql) {
    return PREPARED.computeIfAbsent(cql, session::prepare);
  }

  private static String columns(Set<String> fields) {
    return fields == null ? "*" : String.join(", ", new TreeSet<>(fields));
  }

  private static Status failed(String op, String key, RuntimeException e) {
    if (REPORTED.getAndIncrement() < 10) {
      System.err.println("cassandra " + op + " " + key + " failed: " + e);
    }
    return Status.ERROR;
  }

  private static void copy(Row row, Map<String, ByteIterator> out) {
    for (ColumnDefinition def : row.getColumnDefinitions()) {
      String name = def.getName().asInternal();
      if (!KEY.equals(name)) {
        String v = row.getString(name);
        out.put(name, v == null ? null : new StringByteIterator(v));
      }
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      PreparedStatement ps = prepared("SELECT " + columns(fields) + " FROM " + table + " WHERE " + KEY + " = ?");
      Row row = session.execute(ps.bind(key).setConsistencyLevel(readCl)).one();
      if (row == null) {
        return Status.NOT_FOUND;
      }
      copy(row, result);
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("read", key, e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try {
      PreparedStatement ps = prepared("SELECT " + columns(fields) + " FROM " + table + " WHERE token(" + KEY
          + ") >= token(?) LIMIT ?");
      ResultSet rs = session.execute(ps.bind(startkey, recordcount).setConsistencyLevel(readCl));
      for (Row row : rs) {
        HashMap<String, ByteIterator> out = new HashMap<>();
        copy(row, out);
        result.add(out);
      }
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("scan", startkey, e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      TreeSet<String> names = new TreeSet<>(values.keySet());
      StringBuilder cql = new StringBuilder("UPDATE ").append(table).append(" SET ");
      Object[] bind = new Object[names.size() + 1];
      int i = 0;
      for (String n : names) {
        cql.append(i == 0 ? "" : ", ").append(n).append(" = ?");
        bind[i++] = values.get(n).toString();
      }
      cql.append(" WHERE ").append(KEY).append(" = ?");
      bind[i] = key;
      session.execute(prepared(cql.toString()).bind(bind).setConsistencyLevel(writeCl));
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("update", key, e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      TreeSet<String> names = new TreeSet<>(values.keySet());
      Object[] bind = new Object[names.size() + 1];
      bind[0] = key;
      int i = 1;
      for (String n : names) {
        bind[i++] = values.get(n).toString();
      }
      String cql = "INSERT INTO " + table + " (" + KEY + (names.isEmpty() ? "" : ", " + String.join(", ", names))
          + ") VALUES (?" + ", ?".repeat(names.size()) + ")";
      session.execute(prepared(cql).bind(bind).setConsistencyLevel(writeCl));
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("insert", key, e);
    }
  }

  @Override
  public Status delete(String table, String key) {
    try {
      PreparedStatement ps = prepared("DELETE FROM " + table + " WHERE " + KEY + " = ?");
      session.execute(ps.bind(key).setConsistencyLevel(writeCl));
      return Status.OK;
    } catch (RuntimeException e) {
      return failed("delete", key, e);
    }
  }
}
