;; Tanks of decimal and fractional levels: exact numbers against unified-planning
;; (tests/test_exact_numbers.py) and the numeric run of benchmarks/validate_batch.py.
(define (domain tanks) (:requirements :typing :numeric-fluents :action-costs)
  (:types tank) (:functions (level ?t - tank) (cap ?t - tank) (total-cost) - number)
  (:action fill :parameters (?t - tank) :precondition (<= (+ (level ?t) 0.1) (cap ?t))
    :effect (and (increase (level ?t) 0.1) (increase (total-cost) 0.25)))
  (:action pour :parameters (?a - tank ?b - tank)
    :precondition (and (>= (level ?a) 0.3) (<= (+ (level ?b) 0.3) (cap ?b)))
    :effect (and (decrease (level ?a) 0.3) (increase (level ?b) 0.3)
                 (increase (total-cost) (/ 1 3))))
  (:action halve :parameters (?t - tank) :precondition (> (level ?t) 0)
    :effect (and (assign (level ?t) (/ (level ?t) 2)) (increase (total-cost) 1))))
