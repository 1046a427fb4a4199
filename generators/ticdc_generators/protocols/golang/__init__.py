"""Go library behaviour that several encoders reproduce (float printing, JSON text), kept in one place.

TiCDC is written in Go, so its bytes carry the choices of Go's strconv and JSON writers; each
encoder package picks the variant its TiCDC code path uses.
"""
