package dev.trellis.springboot

import java.io.PrintWriter
import java.lang.reflect.Proxy
import java.sql.Connection
import java.sql.DatabaseMetaData
import java.util.logging.Logger
import javax.sql.DataSource

/** A DataSource whose connections say they are [product] and do nothing else (no such database runs here). */
class FakeProductDataSource(private val product: String) : DataSource {
    override fun getConnection(): Connection {
        val metadata = Proxy.newProxyInstance(javaClass.classLoader, arrayOf(DatabaseMetaData::class.java)) { _, m, _ ->
            when (m.name) {
                "getDatabaseProductName" -> product
                "getURL" -> "jdbc:${product.lowercase()}:mem"
                else -> throw UnsupportedOperationException(m.name)
            }
        }
        return Proxy.newProxyInstance(javaClass.classLoader, arrayOf(Connection::class.java)) { _, m, _ ->
            when (m.name) {
                "getMetaData" -> metadata
                "close" -> null
                else -> throw UnsupportedOperationException(m.name)
            }
        } as Connection
    }

    override fun getConnection(username: String?, password: String?): Connection = connection

    override fun getLogWriter(): PrintWriter? = null

    override fun setLogWriter(out: PrintWriter?) = Unit

    override fun setLoginTimeout(seconds: Int) = Unit

    override fun getLoginTimeout(): Int = 0

    override fun getParentLogger(): Logger = Logger.getGlobal()

    override fun <T : Any?> unwrap(iface: Class<T>?): T = throw UnsupportedOperationException()

    override fun isWrapperFor(iface: Class<*>?): Boolean = false
}
