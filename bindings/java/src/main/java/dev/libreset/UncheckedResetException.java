package dev.libreset;

/**
 * A {@link ResetException} thrown where a checked exception cannot go: from the iterators of
 * {@link Session#generate(int)} and {@link Session#stream(int)}, and from {@link Session#cancel()}.
 */
public class UncheckedResetException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UncheckedResetException(ResetException cause) {
        super(cause.getMessage(), cause);
    }

    @Override
    public synchronized ResetException getCause() {
        return (ResetException) super.getCause();
    }
}
