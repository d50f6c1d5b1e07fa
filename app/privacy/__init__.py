"""What Caseward holds about a customer: handing it over, and erasing it."""
