;; Warm-up: carry one ball from rooma to roomb.
(define (problem gripper-p01)
  (:domain gripper)
  (:objects
    rooma roomb - room
    ball1 - ball
    left right - gripper)
  (:init
    (at-robby rooma)
    (free left)
    (free right)
    (at ball1 rooma)
    (= (total-cost) 0))
  (:goal (and
    (at ball1 roomb)))
  (:metric minimize (total-cost)))
