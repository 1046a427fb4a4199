import sys

from ticdc_conformance.consumers.kafka_reference.consumer import main

sys.exit(main())
