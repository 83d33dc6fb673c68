package site.ycsb.db.metctl;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB binding over the HBase 2 client: read = Get, scan = Scan with a row limit, update and
 * insert = Put, delete = Delete. One Connection per JVM (shared by YCSB's threads, it is
 * thread-safe and heavy); one Table per DB instance (YCSB gives each thread its own DB, and a
 * Table is light and not thread-safe).
 *
 * <p>Properties: {@code columnfamily} (default "family"), and any {@code hbase.*} or
 * {@code zookeeper.*} property is passed to the HBase client configuration (e.g.
 * {@code hbase.zookeeper.quorum}, {@code hbase.zookeeper.property.clientPort}).
 */
public class HBase2Client extends DB {
  private static final Object LOCK = new Object();
  private static Connection connection;
  private static int users;

  private byte[] family;
  private String tableName;
  private Table table;

  @Override
  public void init() throws DBException {
    Properties props = getProperties();
    family = Bytes.toBytes(props.getProperty("columnfamily", "family"));
    synchronized (LOCK) {
      if (connection == null) {
        Configuration conf = HBaseConfiguration.create();
        for (String name : props.stringPropertyNames()) {
          if (name.startsWith("hbase.") || name.startsWith("zookeeper.")) {
            conf.set(name, props.getProperty(name));
          }
        }
        try {
          connection = ConnectionFactory.createConnection(conf);
        } catch (IOException e) {
          throw new DBException("cannot connect to HBase", e);
        }
      }
      users++;
    }
  }

  @Override
  public void cleanup() throws DBException {
    try {
      if (table != null) {
        table.close();
      }
      synchronized (LOCK) {
        users--;
        if (users == 0 && connection != null) {
          connection.close();
          connection = null;
        }
      }
    } catch (IOException e) {
      throw new DBException(e);
    }
  }

  private Table table(String name) throws IOException {
    if (table == null || !name.equals(tableName)) {
      if (table != null) {
        table.close();
      }
      table = connection.getTable(TableName.valueOf(name));
      tableName = name;
    }
    return table;
  }

  private static void copy(Result r, Map<String, ByteIterator> out) {
    for (Cell c : r.rawCells()) {
      out.put(Bytes.toString(CellUtil.cloneQualifier(c)), new ByteArrayByteIterator(CellUtil.cloneValue(c)));
    }
  }

  @Override
  public Status read(String tableName, String key, Set<String> fields, Map<String, ByteIterator> result) {
    Get get = new Get(Bytes.toBytes(key));
    if (fields == null) {
      get.addFamily(family);
    } else {
      for (String f : fields) {
        get.addColumn(family, Bytes.toBytes(f));
      }
    }
    try {
      Result r = table(tableName).get(get);
      if (r.isEmpty()) {
        return Status.NOT_FOUND;
      }
      copy(r, result);
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String tableName, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    Scan scan = new Scan().withStartRow(Bytes.toBytes(startkey)).setLimit(recordcount)
        .setCaching(Math.min(recordcount, 100));
    if (fields == null) {
      scan.addFamily(family);
    } else {
      for (String f : fields) {
        scan.addColumn(family, Bytes.toBytes(f));
      }
    }
    try (ResultScanner scanner = table(tableName).getScanner(scan)) {
      for (Result r : scanner) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        copy(r, row);
        result.add(row);
      }
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String tableName, String key, Map<String, ByteIterator> values) {
    Put put = new Put(Bytes.toBytes(key));
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      put.addColumn(family, Bytes.toBytes(e.getKey()), e.getValue().toArray());
    }
    try {
      table(tableName).put(put);
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String tableName, String key, Map<String, ByteIterator> values) {
    return update(tableName, key, values);
  }

  @Override
  public Status delete(String tableName, String key) {
    try {
      table(tableName).delete(new Delete(Bytes.toBytes(key)));
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }
}
