package ticdc.consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

/**
 * Simple JSON values to the canonical form (docs/consumer-protocol.md, "Output"; docs/fidelity.md).
 * Simple JSON carries every value as a string (spec 004, DML examples: "age":"25"), so the column's
 * mysqlType from the cached tableSchema decides what the string is.
 */
final class Values {
    private static final BigInteger LONG_MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);
    /**
     * -Dticdc.decimal=number prints a DECIMAL as a JSON number (Jackson's BigDecimal, every digit kept)
     * instead of a string: JSON numbers have no fixed precision, so both are the exact value.
     */
    private static final boolean DECIMAL_AS_NUMBER = "number".equals(System.getProperty("ticdc.decimal"));
    /**
     * -Dticdc.json=embedded writes a JSON column's document into the row as a JSON value (parsed by
     * Jackson, printed compact in its own way) instead of TiDB's text of it. The document null stays
     * the text "null": embedded it would be the row's null, which is SQL NULL.
     */
    private static final boolean JSON_EMBEDDED = "embedded".equals(System.getProperty("ticdc.json"));

    private Values() {
    }

    /** The canonical value of one carried value of a column of the given dataType. */
    static JsonNode canonical(JsonNode dataType, JsonNode v, String column) {
        if (v == null || v.isNull()) {
            return NullNode.instance;
        }
        String type = dataType.path("mysqlType").asText().toLowerCase(Locale.ROOT);
        try {
            switch (type) {
                case "tinyint": case "smallint": case "mediumint": case "int": case "bigint":
                case "year": case "bit": case "bool": case "boolean":
                    // exact integers: BIGINT UNSIGNED reaches 2^64-1, which no long or double holds
                    return integer(v.isNumber() ? v.bigIntegerValue() : new BigInteger(v.asText().trim()));
                case "float": case "double":
                    // the carried digits are the shortest that identify the float32/float64 (fidelity [5]);
                    // read as a double they print back as the same value, never widened
                    return DoubleNode.valueOf(v.isNumber() ? v.doubleValue() : Double.parseDouble(v.asText()));
                case "decimal":
                    // a string with exactly the column's scale, as TiDB prints it (or that value as a number)
                    return decimal(v.isNumber() ? v.decimalValue().toPlainString() : v.asText());
                case "enum":
                    return enumName(dataType, v);
                case "set":
                    return setNames(dataType, v);
                case "timestamp":
                    // {"location": zone, "value": "2000-01-01 00:00:00"}: the value is TiDB's print in that zone
                    return TextNode.valueOf(v.isObject() ? v.path("value").asText() : v.asText());
                case "json":
                    return document(v.isTextual() ? v.asText() : v.toString(), column);
                default:
                    // strings as carried; binary types arrive base64 already, temporal as TiDB prints them
                    return TextNode.valueOf(v.isTextual() ? v.asText() : v.toString());
            }
        } catch (NumberFormatException e) {
            throw new ConsumerException("column " + column + " (" + type + "): value " + v + " is no number");
        }
    }

    static JsonNode document(String text, String column) {
        if (!JSON_EMBEDDED) {
            return TextNode.valueOf(text);
        }
        try {
            JsonNode document = Main.MAPPER.readTree(text);
            return document.isNull() ? TextNode.valueOf(text) : document;
        } catch (java.io.IOException e) {
            throw new ConsumerException("column " + column + " (json): value is no JSON document: " + e.getMessage());
        }
    }

    static JsonNode decimal(String text) {
        return DECIMAL_AS_NUMBER ? DecimalNode.valueOf(new BigDecimal(text)) : TextNode.valueOf(text);
    }

    static JsonNode integer(BigInteger n) {
        return n.compareTo(LONG_MIN) >= 0 && n.compareTo(LONG_MAX) <= 0 ? LongNode.valueOf(n.longValue())
                : BigIntegerNode.valueOf(n);
    }

    /** ENUM travels as its 1-based index; the member names are in the tableSchema's "elements". */
    private static JsonNode enumName(JsonNode dataType, JsonNode v) {
        String text = v.asText();
        if (!text.matches("\\d+")) {
            return TextNode.valueOf(text);
        }
        int index = Integer.parseInt(text);
        JsonNode elements = dataType.path("elements");
        return TextNode.valueOf(index == 0 || index > elements.size() ? "" : elements.get(index - 1).asText());
    }

    /** SET travels as its member bitmask; the names, in declaration order, joined by commas. */
    private static JsonNode setNames(JsonNode dataType, JsonNode v) {
        String text = v.asText();
        if (!text.matches("\\d+")) {
            return TextNode.valueOf(text);
        }
        BigInteger mask = new BigInteger(text);
        JsonNode elements = dataType.path("elements");
        List<String> names = new ArrayList<>();
        for (int i = 0; i < elements.size(); i++) {
            if (mask.testBit(i)) {
                names.add(elements.get(i).asText());
            }
        }
        return TextNode.valueOf(String.join(",", names));
    }

    /**
     * What rows that existed before an ADD COLUMN hold in the new column (docs/consumer-rules.md, DDL):
     * its DEFAULT, NULL without one, the type's zero value for NOT NULL without one.
     */
    static JsonNode addedColumnValue(JsonNode column) {
        JsonNode dataType = column.path("dataType");
        JsonNode def = column.get("default");
        String type = dataType.path("mysqlType").asText().toLowerCase(Locale.ROOT);
        boolean binary = type.contains("blob") || type.contains("binary");
        if (def != null && !def.isNull()) {
            // a BINARY/BLOB default is the bytes themselves, rows carry base64
            return binary ? TextNode.valueOf(Base64.getEncoder().encodeToString(def.asText().getBytes(
                    java.nio.charset.StandardCharsets.UTF_8))) : canonical(dataType, def, column.path("name").asText());
        }
        if (column.path("nullable").asBoolean(true)) {
            return NullNode.instance;
        }
        int fsp = dataType.path("decimal").asInt(0);
        String fraction = fsp > 0 ? "." + "0".repeat(fsp) : "";
        switch (type) {
            case "float": case "double":
                return DoubleNode.valueOf(0.0);
            case "decimal":
                return decimal("0" + fraction);
            case "date":
                return TextNode.valueOf("0000-00-00");
            case "datetime": case "timestamp":
                return TextNode.valueOf("0000-00-00 00:00:00" + fraction);
            case "time":
                return TextNode.valueOf("00:00:00" + fraction);
            case "enum":
                JsonNode elements = dataType.path("elements");
                return TextNode.valueOf(elements.size() > 0 ? elements.get(0).asText() : "");
            case "json":
                return TextNode.valueOf("null");
            case "binary":
                return TextNode.valueOf(Base64.getEncoder().encodeToString(new byte[Math.max(0,
                        dataType.path("length").asInt(0))]));
            default:
                if (binary || type.contains("char") || type.contains("text") || type.equals("set")) {
                    return TextNode.valueOf("");
                }
                return JsonNodeFactory.instance.numberNode(0L);
        }
    }
}
