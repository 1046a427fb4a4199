package ticdc.consumer;

/** A record or request the consumer cannot handle; the message names it, and the process exits 1. */
final class ConsumerException extends RuntimeException {
    ConsumerException(String message) {
        super(message);
    }
}
